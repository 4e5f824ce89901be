"""Signed changes never print a negative zero: a bound of -0.03% reads '-0.03%', not '-0.0%'."""

from __future__ import annotations

import pytest

from generator.analysis.wording import pct
from generator.format.signed import change, signed


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [(1.077, "+7.7%"), (0.95, "-5.0%"), (0.9997, "-0.03%"), (1.0004, "+0.04%"), (1.0, "0.0%"), (0.99999, "-0.001%")],
)
def test_a_ratio_reads_as_a_signed_change_without_negative_zero(ratio: float, shown: str) -> None:
    assert change(ratio) == shown == pct(ratio)


def test_points_and_zero() -> None:
    assert signed(-0.0) == "0.0%" and signed(-0.04, unit=" pp") == "-0.04 pp" and signed(12.345) == "+12.3%"
