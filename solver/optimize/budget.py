"""Why "what does $X buy" (objective: fastest) spends less than the budget, and what the rest would need.

The fastest design within the caps is exact (the MILP), so every faster design breaks a cap. When the
best design leaves more than 1 % of the budget unspent, the note names the reason a planner can act on:

- the batch is the limit: each data-parallel replica already gets one microbatch (dp · mbs = B), so more
  GPUs of this layout cannot shorten the step; the rest needs a larger global batch or more tp/cp/pp;
- else the next layout of the same design, the next dp that splits the batch evenly (B/mbs divisible
  by dp), evaluated by the single evaluator (results.make_design): its GPUs, step time and capex,
  which is over the budget (or it cannot be built).
"""
from __future__ import annotations

import dataclasses

from ..inputs.schema import Catalog, Scenario
from ..results import SolveResult, make_design

UNSPENT = 0.01  # a note when more than 1 % of the budget is left (the $60M example leaves 6 %)


def budget_note(sc: Scenario, catalog: Catalog, result: SolveResult) -> str | None:
    """The note for `objective: fastest` with a budget, or None."""
    budget = sc.constraints.budget_usd
    if sc.objective != "fastest" or budget is None or not result.designs:
        return None
    d = result.designs[0]
    capex = d.cost.capex_usd
    if capex >= (1 - UNSPENT) * budget:
        return None
    lay, batch = d.layout, sc.workload.global_batch_size
    spent = f"#1 spends ${capex:,.0f} of the ${budget:,.0f} budget ({capex / budget:.0%}, ${budget - capex:,.0f} left)"
    per_replica = batch // lay.microbatch_size
    nxt = next((k for k in range(lay.dp + 1, per_replica + 1) if per_replica % k == 0), None)
    if nxt is None:
        return (f"{spent}: the batch is the limit: its {batch:,} sequences are already one microbatch of "
                f"{lay.microbatch_size} per data-parallel replica (dp = {lay.dp:,}), so more GPUs cannot shorten "
                "the step; the rest of the budget needs a larger global_batch_size or more tensor, context or "
                "pipeline parallelism (the parallelism allow-lists)")
    bigger = make_design(sc, catalog, d.architecture, dataclasses.replace(lay, dp=nxt), d.target_step_time_s)
    gpus = lay.tp * lay.cp * lay.pp * nxt
    if bigger is None:
        return (f"{spent}: the next layout that splits the {batch:,}-sequence batch evenly, dp {lay.dp:,} → "
                f"{nxt:,} ({gpus:,} GPUs), cannot be built on this fabric")
    over = bigger.cost.capex_usd - budget
    verdict = (f"${bigger.cost.capex_usd:,.0f}, ${over:,.0f} over the budget" if over > 0
               else f"${bigger.cost.capex_usd:,.0f}, within the budget but it breaks another cap")
    days = f", {bigger.train_days:,.0f} days" if bigger.train_days is not None else ""
    return (f"{spent}: the next design up is the same one with more GPUs, and more GPUs help only where the "
            f"{batch:,}-sequence batch still splits evenly: the next data-parallel size after dp = {lay.dp:,} is "
            f"{nxt:,}, and that layout ({bigger.cost.gpus:,} GPUs, {bigger.perf.step_time_s:.2f} s per step{days}) "
            f"costs {verdict}")
