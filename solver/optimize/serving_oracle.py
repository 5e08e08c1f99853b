"""The exhaustive enumeration of a serving fleet space (SPEC §7, §10): every aggregated pool and every prefill ×
decode pair, at every offered replica count, checked against the same rows as the MILP (the same coefficients,
read off the same candidates), costed by the same bills of materials, ranked; the K best distinct by the pools'
architectures. Small spaces only (tests): the MILP must find the same optimum and the same K best.
"""
from __future__ import annotations

from collections.abc import Iterator

from ..design_space.serving import FleetSpace, PoolOption, rows_ok
from .serving_model import Caps

Pick = tuple[tuple[PoolOption, int], ...]


def fleets(space: FleetSpace) -> Iterator[Pick]:
    """Every fleet of the space whose pools meet their rows (and the same-platform rule when set)."""
    ok = {role: [(o, j) for o in space.of(role) for j in range(len(o.replicas)) if rows_ok(space, o, j)]
          for role in ("aggregated", "prefill", "decode")}
    if "aggregated" in space.modes:
        for pick in ok["aggregated"]:
            yield (pick,)
    if "disaggregated" in space.modes:
        for pf in ok["prefill"]:
            for dc in ok["decode"]:
                if space.same_platform and pf[0].machine.platform != dc[0].machine.platform:
                    continue
                if pf[0].machine.network != dc[0].machine.network:  # kv_path
                    continue
                yield (pf, dc)


def _totals(pick: Pick) -> dict[str, float]:
    costs = [o.costs[j] for o, j in pick]
    return {"capex": sum(c.capex_usd for c in costs), "tco": sum(c.tco_usd for c in costs),
            "gpus": sum(c.gpus for c in costs), "power": sum(c.facility_power_kw for c in costs),
            "racks": sum(c.racks for c in costs),
            "tpot": sum(o.tpot_s for o, _ in pick if o.role != "prefill")}


def _within(t: dict[str, float], caps: Caps) -> bool:
    for cap, key in ((caps.max_gpus, "gpus"), (caps.budget_usd, "capex"), (caps.facility_power_kw, "power"),
                     (caps.max_racks, "racks")):
        if cap is not None and t[key] > cap * (1 + 1e-9):
            return False
    return True


def identity(pick: Pick, distinct_by: str = "architecture") -> tuple:
    if distinct_by == "platform":
        return tuple((o.role, o.machine.platform) for o, _ in pick)
    return tuple((o.role,) + o.machine.key for o, _ in pick)


def enumerate_best(space: FleetSpace, caps: Caps, objective: str, k: int,
                   distinct_by: str = "architecture") -> list[tuple[float, float, Pick]]:
    """(cost, tpot, fleet) of the K best distinct fleets: cheapest first (`capex`, `tco`), or fastest then
    cheapest (`fastest`); one per architecture identity."""
    cost_key = "tco" if objective == "tco" else "capex"
    rows = []
    for pick in fleets(space):
        t = _totals(pick)
        if _within(t, caps):
            rows.append((t[cost_key], t["tpot"], pick))
    if objective == "fastest":
        rows.sort(key=lambda r: (round(r[1], 12), r[0]))
    else:
        rows.sort(key=lambda r: r[0])
    out, seen = [], set()
    for row in rows:
        ident = identity(row[2], distinct_by)
        if ident in seen:
            continue
        seen.add(ident)
        out.append(row)
        if len(out) == k:
            break
    return out
