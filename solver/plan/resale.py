"""Retire and resell (issue 43b, SPEC §6.3): with `plan.resale_fraction` r, each cluster's hardware is sold at
the end of the last period it runs the jobs (a cluster left behind by the move of allow_second, or the one
running the last period), at

    value of one unit = r · P · φ_p            (P the catalog unit price, φ_p the part's price factor in period p)

booked in period p and discounted with it (δ_p); extra lines (installation, services) and free parts have no
resale value. The objective becomes Σ_p δ_p · (spend_p + energy_p − resale_p).

MILP families (plan/model.py calls `add_resale`; docs/plan.md lists them):

    resale_held[p,g,key]     sold[p,g,key] ≤ Σ_{q≤p} bought[q,g,key] + owned[key]·run[0,g]
    resale_runs[p,g,key]     sold[p,g,key] ≤ M_key · run[p,g]
    resale_stops[p,g,key]    sold[p,g,key] ≤ M_key · (1 − run[p+1,g])     (run[P,g] = 0)
                             so a cluster sells only in the last period it runs (the run of an architecture
                             is one block of periods: same_architecture or first/second_cluster make it so);
                             M_key: the largest need the period models allow (variables' bounds) + owned
    resale_p                 = Σ_{g,key} r · P_key · φ_p,key · sold[p,g,key]

sold is rewarded, so at the optimum it equals what the cluster holds when it stops. The ledger
(`resale_usd`) prices the same sale from a plan's purchases, and the enumeration uses the ledger.
"""
from __future__ import annotations

import math
from typing import Any

import pyomo.core as pyo
from pyomo.contrib.fbbt.fbbt import compute_bounds_on_expr

from ..optimize.data import MUSD


def resellable(st: Any) -> bool:
    """Hardware with a price: extras and free parts are not resold."""
    return st.category != "extra" and st.unit_price_usd > 0


def unit_value_usd(spec: Any, p: int, st: Any) -> float:
    """r · P · φ_p of one unit sold at the end of period p (undiscounted)."""
    return float(spec.resale_fraction) * st.unit_price_usd * spec.factor(p, st.category, st.part)


def _big_m(m: Any, g: int, key: str) -> float:
    """Upper bound on what g's cluster can hold of key at the optimum: the largest need + owned."""
    top = 0.0
    for p in m.P:
        a = m.local[p].get(m.G[g])
        st = None if a is None else m.period[p].stock[a].get(key)
        if st is None:
            continue
        ub = compute_bounds_on_expr(st.needed)[1] if not isinstance(st.needed, (int, float)) else st.needed
        top = max(top, float(ub) if ub is not None and math.isfinite(ub) else 1e7)
    return top + float(m.keys[g][key].owned)


def _row(lhs: Any, rhs: Any) -> Any:
    return pyo.Constraint.Skip if isinstance(rhs, (int, float)) and rhs >= 1e7 else lhs <= rhs


def add_resale(m: Any) -> None:
    """resale_held, resale_runs, resale_stops and resale_p (module docstring); m.resale[p] in M$ (0 without resale).
    Block m.resold: SOLD = the (p, g, key) of resellable parts, sold[p,g,key] ≥ 0 and the three rows."""
    spec = m.spec
    m.resale = {p: 0 for p in m.P}
    if spec.resale_fraction is None:
        return
    last = m.P[-1]
    after = {(p, g): (m.run[p + 1, g] if p < last else 0) for p in m.P for g in m.GI}
    b = m.resold
    rows = b.SOLD = [(p, g, key) for p in m.P for (g, key) in m.GK if resellable(m.keys[g][key])]
    sold = b.sold = pyo.Var(rows, domain=pyo.NonNegativeReals)

    def held(_, p, g, key):
        have = sum(m.bought[q, g, key] for q in m.P if q <= p) + m.keys[g][key].owned * m.run[0, g]
        return sold[p, g, key] <= have

    big = {(g, key): _big_m(m, g, key) for (_, g, key) in rows}
    b.resale_held = pyo.Constraint(rows, rule=held)
    b.resale_runs = pyo.Constraint(rows, rule=lambda _, p, g, key: sold[p, g, key] <= big[g, key] * m.run[p, g])
    b.resale_stops = pyo.Constraint(rows, rule=lambda _, p, g, key: _row(sold[p, g, key],
                                                                        big[g, key] * (1 - after[p, g])))
    for p in m.P:
        m.resale[p] = sum(unit_value_usd(spec, p, m.keys[g][key]) * sold[q, g, key]
                          for (q, g, key) in rows if q == p) * MUSD


def resale_usd(spec: Any, designs: list, clusters: list[int], held_after: list[dict], stock: dict) -> list[float]:
    """The ledger's resale per period: each cluster sells what it holds after the last period it runs
    (held_after[p][(cluster, key)]), at r · P · φ_p. All zeros without resale."""
    out = [0.0] * len(designs)
    if spec.resale_fraction is None:
        return out
    for c in sorted(set(clusters)):
        p = max(q for q, cl in enumerate(clusters) if cl == c)
        for (cl, key), n in held_after[p].items():
            st = stock[cl, key]
            if cl == c and n > 0 and resellable(st):
                out[p] += n * unit_value_usd(spec, p, st)
    return out
