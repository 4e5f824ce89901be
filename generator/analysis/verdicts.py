"""The verdict a comparison claim gets: the names, and the rule that picks one.

The rule is published on the generated methods page from these parameters.
"""

from __future__ import annotations

from typing import Literal, get_args

Verdict = Literal["supported", "contradicted", "within noise", "inconclusive", "no trial data"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)


def verdict(low: float, high: float, direction: int, min_effect: float, noise: float) -> Verdict:
    """The verdict rule, in order: supported, contradicted, within noise, inconclusive.

    `low` and `high` bound the ratio candidate/baseline. `direction` is +1 when the claim
    says the ratio is above 1, -1 below, 0 when the claim has no direction (then only
    "within noise" or "inconclusive").
    """
    above, below = low > 1 + min_effect, high < 1 - min_effect
    if direction and (above if direction > 0 else below):
        return "supported"
    if direction and (below if direction > 0 else above):
        return "contradicted"
    if low >= 1 - noise and high <= 1 + noise:
        return "within noise"
    return "inconclusive"
