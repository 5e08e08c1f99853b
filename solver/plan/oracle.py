"""The exhaustive enumeration a plan is checked against: every feasible design of every period
(`optimize.oracle.enumerate_designs`, unpruned, one by one), every sequence of them the plan's
architecture rule allows, each priced by the ledger. No model, no pruning.

keep_one:     one architecture, any of its designs in each period.
allow_second: an architecture A1 for periods 0 … k−1 and a different A2 for periods k … P−1
              (k = P: no move), any of their designs in each period.

A sequence that needs a part no period up to the need can order (catalog lifecycle windows) is
not a plan. The enumeration covers plans without a budget cap (a cap on a period's purchases couples the
purchase timing to the sequence; the model handles it, the ledger then takes the model's purchases).
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator

from ..inputs.schema import Catalog
from ..optimize.oracle import enumerate_designs
from ..results import Design
from .ledger import NotOrderable, ledger
from .periods import PlanSpec


def _by_architecture(designs: list[Design]) -> dict:
    out: dict = {}
    for d in designs:
        out.setdefault(d.architecture, []).append(d)
    return out


def sequences(spec: PlanSpec, per_period: list[dict]) -> Iterator[tuple[tuple[Design, ...], list[int]]]:
    """(a design per period, the cluster of each period) for every sequence the rule allows."""
    n = len(per_period)
    common = set.intersection(*(set(p) for p in per_period))
    for arch in sorted(common):
        for combo in itertools.product(*(p[arch] for p in per_period)):
            yield combo, [1] * n
    if spec.architectures != "allow_second":
        return
    for k in range(1, n):
        firsts = set.intersection(*(set(p) for p in per_period[:k]))
        seconds = set.intersection(*(set(p) for p in per_period[k:]))
        for a1, a2 in itertools.product(sorted(firsts), sorted(seconds)):
            if a1 == a2:
                continue
            lists = [per_period[p][a1] for p in range(k)] + [per_period[p][a2] for p in range(k, n)]
            for combo in itertools.product(*lists):
                yield combo, [1] * k + [2] * (n - k)


def enumerate_plans(spec: PlanSpec, catalog: Catalog, first_period_only: bool = False) -> list[tuple[float, list, list]]:
    """Every allowed plan as (objective to the cent, designs, clusters), cheapest first."""
    if any(p.scenario.constraints.budget_usd is not None for p in spec.periods):
        raise ValueError("the enumeration covers plans without budget_usd")
    per_period = [_by_architecture(enumerate_designs(p.scenario, catalog)) for p in spec.periods]
    out = []
    for combo, clusters in sequences(spec, per_period):
        if first_period_only and len(set(clusters)) > 1:
            continue
        try:
            book = ledger(spec, catalog, list(combo), clusters, first_period_only=first_period_only)
        except NotOrderable:  # a part the sequence needs was never orderable in time (catalog lifecycle)
            continue
        out.append((round(book.objective_usd, 2), list(combo), clusters))
    out.sort(key=lambda t: t[0])
    return out
