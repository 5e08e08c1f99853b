"""The plan's honest baseline: the purchase schedule a planner would make by hand. Take the
architecture the last period needs (its from-scratch answer), run every period's job on it, and buy
what each period needs when it needs it (the ledger's cheapest purchases: with falling prices and a
discount, the latest period that still meets the need). The layout of each period is still the best
one on that architecture. (plan/run.py solves the pinned spec: this module builds it and imports
no solver, so run.py may import it.) The plan MILP, free to choose and switch architectures, can only do as
well or better; the report says by how much.
"""
from __future__ import annotations

import dataclasses

from ..results import Design
from .periods import PlanSpec


def pinned_spec(spec: PlanSpec, final: Design) -> PlanSpec:
    """Every period's scenario pinned to the final design's architecture (tiers and layout left free)."""
    a = final.architecture
    pin = {"platform": a.platform, "nic": a.nic, "rails_per_node": a.rails_per_node, "switch": a.switch,
           "oversubscription": a.oversubscription, "fabric": a.fabric,
           "above_pod_oversubscription": a.above_pod_oversubscription}
    periods = []
    for period in spec.periods:
        sc = period.scenario
        pinned = sc.model_copy(update={"pin": sc.pin.model_copy(update=pin)})
        periods.append(dataclasses.replace(period, scenario=pinned))
    return spec.only(periods, "keep_one")

