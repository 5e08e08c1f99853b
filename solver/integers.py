"""Integer helpers shared by sizing rules and layouts (no dependencies)."""
from __future__ import annotations

import math


def _tolerance(x: float) -> float:
    # Float noise grows with magnitude: 0.1 · 30 = 3.0000000000000004 must still ceil to 3.
    return 1e-9 * max(1.0, abs(x))


def ceil_int(x: float) -> int:
    """⌈x⌉, ignoring float noise just above an integer."""
    return math.ceil(x - _tolerance(x))


def floor_int(x: float) -> int:
    """⌊x⌋, ignoring float noise just below an integer."""
    return math.floor(x + _tolerance(x))


def is_close_to_one(x: float) -> bool:
    return abs(x - 1.0) <= _tolerance(1.0)


def divisors(n: int) -> list[int]:
    """All positive divisors of n, ascending (uniform striping needs a divisor). [] for n < 1."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0] if n >= 1 else []
    return sorted(set(small + [n // d for d in small]))


def smallest_divisor_at_least(n: int, minimum: int) -> int | None:
    """min{d : d divides n, d ≥ minimum}; None when minimum > n."""
    return next((d for d in divisors(n) if d >= minimum), None)
