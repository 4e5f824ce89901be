"""Signed changes never print a negative zero: a bound of -0.03% reads '-0.03%', not '-0.0%'.
A confidence level reads the same on every page, chart and CLI line, and never as 100%."""

from __future__ import annotations

import pytest

from generator.analysis.wording import pct
from generator.format.signed import change, level, signed
from generator.render import text as t


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [(1.077, "+7.7%"), (0.95, "-5.0%"), (0.9997, "-0.03%"), (1.0004, "+0.04%"), (1.0, "0.0%"), (0.99999, "-0.001%")],
)
def test_a_ratio_reads_as_a_signed_change_without_negative_zero(ratio: float, shown: str) -> None:
    assert change(ratio) == shown == pct(ratio)


def test_points_and_zero() -> None:
    assert signed(-0.0) == "0.0%" and signed(-0.04, unit=" pp") == "-0.04 pp" and signed(12.345) == "+12.3%"


@pytest.mark.parametrize(
    ("confidence", "shown"),
    [
        (0.95, "95%"),
        (2 * 0.95 - 1, "90%"),  # the TOST level, 0.8999999999999999
        (0.995, "99.5%"),
        (1 - 0.05 / 4, "98.75%"),  # Bonferroni over four conditions
        (1 - 0.05 / 3, "98.33%"),
        (0.99999, "99.999%"),  # four digits would read 100%
    ],
)
def test_a_confidence_level_reads_one_way_everywhere(confidence: float, shown: str) -> None:
    assert level(confidence) == shown == str(t.level(confidence))
