"""What a publisher said about an effect (`claimed:`), in one of three kinds.

- **direction**: absent (the metric's `better`), or a bare sign `"+"` / `"-"`;
- **magnitude**: `"+20%"`, `"-5%"`, `"1.2x"`, `"0.8x"`, or unsigned `"20%"` (in the
  direction of the metric's `better`);
- **equivalence**: `"±2%"`, `"+/-2%"`, `"within 2%"` (the sides differ by less than 2%),
  or `"0%"`, `"1.0x"`, `"no difference"` (the margin is the smallest change worth calling,
  `min_effect`, never the data's noise).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ClaimedKind = Literal["direction", "magnitude", "equivalence"]
Direction = Literal[-1, 0, 1]  # the sign of a change: +1 up, -1 down, 0 none given

_SIGN = re.compile(r"^\s*([+\-−])\s*$")
_PERCENT = re.compile(r"^\s*([+\-−]?)\s*(\d+(?:\.\d+)?)\s*%\s*$")
_NONE = re.compile(r"^\s*no\s+difference\s*$", re.I)
_TIMES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[x×]\s*$")
_WITHIN = re.compile(r"^\s*(?:±|\+/-|\+-|within)\s*(\d+(?:\.\d+)?)\s*%\s*$", re.I)
SIGNS: dict[str, Direction] = {"+": 1, "-": -1, "−": -1}
MAX_PERCENT = 10_000.0  # +10,000% is a 101x ratio; anything larger is a typo


@dataclass(frozen=True)
class Claimed:
    """A parsed `claimed:` value.

    `ratio` is the claimed candidate/baseline ratio of a magnitude (None otherwise);
    `direction` is +1, -1, or 0 when the text carries no sign (then the metric's `better`
    decides); `margin` is the equivalence margin as a fraction, None for "no difference"
    (min_effect is then the margin) and for the other kinds.
    """

    text: str
    kind: ClaimedKind
    direction: Direction = 0
    size: float | None = None  # magnitude: the claimed relative change, unsigned (0.2 for 20%)
    ratio_given: float | None = None  # magnitude written as a ratio ("1.2x")
    margin: float | None = None

    def ratio(self, direction: Direction) -> float | None:
        """The claimed ratio of a magnitude, once the direction is known (`direction_of`)."""
        if self.kind != "magnitude":
            return None
        if self.ratio_given is not None:
            return self.ratio_given
        assert self.size is not None
        return 1 + (direction or 1) * self.size


def parse_claimed(text: str) -> Claimed:
    """Parse a `claimed:` value; ValueError with the accepted forms for anything else."""
    if _NONE.match(text):
        return Claimed(text, "equivalence")
    if match := _SIGN.match(text):
        return Claimed(text, "direction", SIGNS[match.group(1)])
    if match := _WITHIN.match(text):
        margin = _fraction(text, match.group(1))
        if margin == 0:
            raise ValueError(
                f"claimed {text!r}: no interval ever lies inside a margin of 0; write the largest difference "
                'that still counts as none ("±2%"), or "no difference" for the smallest change worth calling'
            )
        return Claimed(text, "equivalence", margin=margin)
    if match := _PERCENT.match(text):
        size = _fraction(text, match.group(2))
        if size == 0:
            return Claimed(text, "equivalence")
        sign = SIGNS.get(match.group(1), 0)
        if sign < 0 and size >= 1:
            raise ValueError(f"claimed {text!r}: a decrease of 100% or more leaves nothing; write a smaller one")
        return Claimed(text, "magnitude", sign, size=size)
    if match := _TIMES.match(text):
        ratio = float(match.group(1))
        if ratio <= 0 or ratio > 1 + MAX_PERCENT / 100:
            raise ValueError(f"claimed {text!r}: a ratio must lie above 0 and at most {1 + MAX_PERCENT / 100:g}x")
        if ratio == 1:
            return Claimed(text, "equivalence")
        return Claimed(text, "magnitude", 1 if ratio > 1 else -1, ratio_given=ratio)
    raise ValueError(
        f'claimed {text!r} is not an effect; write a direction ("+", "-"), a magnitude ("+20%", "-5%", '
        '"1.2x") or an equivalence ("±2%", "within 2%", "0%", "no difference")'
    )


def _fraction(text: str, digits: str) -> float:
    value = float(digits)
    if value > MAX_PERCENT:
        raise ValueError(f"claimed {text!r}: {value:g}% is beyond {MAX_PERCENT:,.0f}%; check the figure")
    return value / 100
