"""The wall-clock budget of one solve (`--time-limit`), shared by every stage that can take long.

A solve builds the design space, collects the model constants and bounds, builds the MILP and runs
the K-best loop; `--time-limit S` bounds all of it. Each stage may use the budget up to its share
(`SHARES`), so that a stage cut short still leaves the later ones time to turn what was found into
an answer; HiGHS gets whatever is left. A stage that stops early says so, and the result's status
then says the search was cut short (`time_limit`), never `optimal`.
"""
from __future__ import annotations

import time

SHARES = {"design_space": 0.5, "bounds": 0.7, "model": 0.85}  # fraction of the budget each stage may end by


class Deadline:
    """A budget of `seconds` from now (None: no limit)."""

    def __init__(self, seconds: float | None, start: float | None = None):
        self.seconds = seconds
        self.start = time.perf_counter() if start is None else start

    def elapsed_s(self) -> float:
        return time.perf_counter() - self.start

    def remaining_s(self, share: float = 1.0) -> float | None:
        """Seconds left until `share` of the budget is used (None without a limit; may be ≤ 0)."""
        if self.seconds is None:
            return None
        return self.seconds * share - self.elapsed_s()

    def expired(self, stage: str | None = None) -> bool:
        """True when the budget (or the stage's share of it) is used up."""
        left = self.remaining_s(SHARES[stage] if stage else 1.0)
        return left is not None and left <= 0


NO_LIMIT = Deadline(None)
