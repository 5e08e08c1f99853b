"""Percentages of `fabricplan calibrate`'s errors, bounded in width (issue 44 item 7): an error of 10¹³ % is
"> 1000%", never 300 digits."""
from __future__ import annotations

import math

LARGEST = 10.0  # a fraction beyond this (1000 %) is shown as "> 1000%"


def percent(x: float, sign: bool = True) -> str:
    """x as a percentage with one decimal ("+3.2%"), or "> +1000%" / "> 1000%" beyond LARGEST."""
    if not math.isfinite(x) or abs(x) > LARGEST:
        bound = f"{'+' if sign and x > 0 else '−' if x < 0 else ''}{LARGEST:.0%}"
        return f"> {bound}" if not math.isnan(x) else "n/a"
    return f"{x:+.1%}" if sign else f"{x:.1%}"
