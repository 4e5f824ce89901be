"""What a publisher said about an effect: `claimed: "+20%"`, `"1.2x"`, `"-5%"`."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Claimed:
    """A publisher's stated effect: '+20%' -> ratio 1.2, direction +1."""

    text: str
    ratio: float
    direction: int  # +1, -1, or 0 when the text carries no sign


_PERCENT = re.compile(r"^\s*([+\-−]?)\s*(\d+(?:\.\d+)?)\s*%\s*$")
_TIMES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[x×]\s*$")


def parse_claimed(text: str) -> Claimed:
    """Parse '+20%', '-5%', '20%' (unsigned) or '1.2x'/'0.8x' (signed by which side of 1)."""
    if match := _PERCENT.match(text):
        sign = {"+": 1, "-": -1, "−": -1}.get(match.group(1), 0)
        size = float(match.group(2)) / 100
        return Claimed(text, 1 + (sign or 1) * size, sign)
    if match := _TIMES.match(text):
        ratio = float(match.group(1))
        if ratio <= 0:
            raise ValueError(f"claimed {text!r}: a ratio must be above 0")
        return Claimed(text, ratio, (ratio > 1) - (ratio < 1))
    raise ValueError(f'claimed {text!r} is not an effect; write "+20%", "-5%" or "1.2x"')
