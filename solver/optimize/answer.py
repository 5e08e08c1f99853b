"""The answer in the units the scenario asked in (issue 45 item 2): a target given in tokens or days is answered
in days, the step time beside it; a model named by preset or parameter count carries what the loader assumed.

`answer_in_days` reads the ranked designs (their `train_days`, results.Design: steps·step_time / (goodput·86,400))
and the scenario's target; the reports print the sentence above the table and the JSON holds it as `answer`.
"""
from __future__ import annotations

from ..inputs.schema import Scenario
from ..results import SolveResult


def tokens_text(tokens: float) -> str:
    """15e12 → '15T', 2.5e11 → '250B' (three significant figures)."""
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if tokens >= scale:
            return f"{tokens / scale:.3g}{unit}"
    return f"{tokens:,.0f}"


def answer_in_days(sc: Scenario, result: SolveResult) -> str | None:
    """'#1 trains 15T tokens in ≈ 162.5 days (15.17 s per step), within the 200-day target (37.5 days to spare)'; None
    without train_tokens or designs (an infeasible answer says it in days itself: optimize/diagnose.py)."""
    tokens = sc.target.train_tokens
    if tokens is None or not result.designs:
        return None
    d = result.designs[0]
    days = d.train_days
    if days is None:
        return None
    text = f"#{d.rank} trains {tokens_text(tokens)} tokens in ≈ {days:,.1f} days ({d.perf.step_time_s:.3g} s per step"
    text += f", goodput {d.goodput:.1%})" if d.goodput < 1 else ")"
    target = sc.target.train_days
    if target is not None:
        spare = target - days
        text += (f", within the {target:g}-day target ({spare:,.1f} days to spare)" if spare >= 0
                 else f", {-spare:,.1f} days over the {target:g}-day target (the step-time target assumes goodput "
                      "1 or the one given)")
    elif len(result.designs) > 1:
        others = ", ".join(f"#{x.rank} {x.train_days:,.1f}" for x in result.designs[1:] if x.train_days is not None)
        text += f"; the others, in days: {others}" if others else ""
    return text


def with_answer(sc: Scenario, result: SolveResult) -> SolveResult:
    """The result with the scenario's assumptions, its answer in days and a warning on stale prices filled in."""
    from .price_age import price_age_warning

    result.assumptions = list(sc.workload.assumptions)
    result.answer = answer_in_days(sc, result)
    result.price_warning = price_age_warning(result.designs, sc.price_max_age_months)
    return result
