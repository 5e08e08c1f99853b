"""What a finished plan says (`"schema": "fabricplan.plan/1"`): per period the design running the job,
what is bought, what is owned, the spend; the totals; and the comparisons with buying every period
from scratch and with buying everything in the first period.

    spend_p       = capex_p (+ energy_p for objective tco)
    discounted_p  = δ_p · spend_p                     total = Σ_p discounted_p (the plan's objective)
    book value    = count · unit price · max(0, 1 − age / tco.years), age = year − purchase_year
                    (owned inventory with a purchase_year, when plan.start_year is given)
"""
from __future__ import annotations

from typing import Any

from .. import costing
from ..confidence import confidence
from ..inputs.schema import Catalog
from ..results import Design
from .ledger import Ledger, PeriodSpend, gpus_per_unit, owned_gpus
from .periods import Period, PlanSpec

SCHEMA = "fabricplan.plan/1"


def _spend(spec: PlanSpec, ps: PeriodSpend) -> float:
    return ps.capex_usd + (ps.energy_usd if spec.objective == "tco" else 0.0)


def _clusters(catalog: Catalog, designs: list[Design], clusters: list[int], p: int, ps: PeriodSpend) -> list[dict]:
    """Every cluster built by period p: the one running the job, and an earlier one available for other work."""
    out = []
    for c in sorted(set(clusters[: p + 1])):
        first = clusters.index(c)
        last = max(q for q in range(p + 1) if clusters[q] == c)
        platform = designs[last].architecture.platform
        gpus = ps.held.get((c, platform), 0) * gpus_per_unit(catalog, platform)
        out.append({"cluster": c, "architecture": designs[last].label, "since_period": first,
                    "role": "running the job" if clusters[p] == c else "available for other work",
                    "gpus_held": gpus})
    return out


def _owned(designs: list[Design], clusters: list[int], ps: PeriodSpend) -> list[dict]:
    """Everything held after this period's purchases, per cluster and stock key (free parts left out)."""
    stock = {(c, key): st for d, c in zip(designs, clusters) for key, st in d.cost.stock.items()}
    return [{"cluster": c, "key": key, "part": stock[c, key].part, "category": stock[c, key].category, "units": units}
            for (c, key), units in sorted(ps.held.items()) if units > 0 and stock[c, key].unit_price_usd > 0]


OWNED_CATEGORY = {"platforms": "compute", "nics": "nic", "switches": "switch", "links": "link", "racks": "rack"}


def _idle(design: Design, cluster: int, ps: PeriodSpend) -> list[dict]:
    """Units the running cluster holds beyond what this period's design needs, at catalog price, and
    owned parts the design cannot use at all (another platform's nodes, say): the same idle counts as
    the period's `inventory` list."""
    out = []
    for key, st in design.cost.stock.items():
        held = ps.held.get((cluster, key), 0)
        if held > st.needed and st.unit_price_usd > 0:
            idle = held - st.needed
            out.append({"key": key, "part": st.part, "category": st.category, "held": held, "needed": st.needed,
                        "idle": idle, "value_usd": idle * st.unit_price_usd})
    for use in design.cost.inventory:
        if use.idle > 0 and use.part not in design.cost.stock:
            out.append({"key": use.part, "part": use.part, "category": OWNED_CATEGORY.get(use.kind, use.kind),
                        "held": use.owned, "needed": use.used, "idle": use.idle, "value_usd": use.idle_value_usd,
                        "owned": True})
    return out


def book_values(spec: PlanSpec, catalog: Catalog, period: Period, design: Design) -> list[dict]:
    """The owned inventory in one period: used by the design, and its straight-line book value when
    its purchase year and the plan's start year are known."""
    out = []
    items = period.scenario.inventory
    for use in design.cost.inventory:
        item = items[use.part]
        age = (period.year - item.purchase_year) if period.year is not None and item.purchase_year is not None else None
        life = period.scenario.tco.years
        book = use.owned * use.unit_price_usd * max(0.0, 1 - age / life) if age is not None else None
        out.append({**use.to_dict(), "age_years": age, "book_value_usd": book})
    return out


def _period_row(spec: PlanSpec, catalog: Catalog, p: int, design: Design, clusters: list[int], designs: list[Design],
                ps: PeriodSpend) -> dict:
    period = spec.periods[p]
    lay = design.layout
    spend = _spend(spec, ps)
    return {
        "index": p, "label": period.label, "year": period.year, "values": period.values,
        "target_step_time_s": period.step_time_s, "price_factors": period.price_factors,
        "discount_factor": period.discount_factor, "cluster": clusters[p], "architecture": design.label,
        "platform": design.architecture.platform, "gpus": design.cost.gpus, "gpus_used": design.perf.gpus,
        "nodes": design.cost.nodes, "step_time_s": design.perf.step_time_s, "goodput": design.goodput,
        "network_load": design.network_load.get("value"), "caveats": list(confidence(design).flags),
        "confidence": confidence(design).statement(),
        "layout": {"tp": lay.tp, "cp": lay.cp, "pp": lay.pp, "vp": lay.vp, "dp": lay.dp,
                   "microbatch_size": lay.microbatch_size},
        "bought": [x.to_dict() for x in ps.purchases],
        "hardware_usd": ps.hardware_usd, "extra_usd": ps.extra_usd, "fraction_usd": ps.fraction_usd,
        "contingency_usd": ps.contingency_usd, "capex_usd": ps.capex_usd, "energy_usd": ps.energy_usd,
        "facility_kw": design.cost.facility_power_kw, "usd_per_kwh": design.cost.usd_per_kwh,
        "contingency_fraction": period.scenario.constraints.contingency_fraction,
        "hardware_fraction": costing.hardware_fraction(period.scenario.extra_costs),
        "spend_usd": spend, "discounted_usd": ps.discount_factor * spend, "resale_usd": ps.resale_usd,
        "discounted_resale_usd": ps.discount_factor * ps.resale_usd,
        "gpus_owned": ps.gpus_owned, "orderable_platforms": orderable_platforms(spec, catalog, p),
        "owned": _owned(designs, clusters, ps), "clusters": _clusters(catalog, designs, clusters, p, ps),
        "idle": _idle(design, clusters[p], ps),
        "inventory": book_values(spec, catalog, period, design), "design": design.to_dict(),
    }


def totals(spec: PlanSpec, book: Ledger) -> dict:
    """Undiscounted capex, energy, spend and resale; the discounted spend (gross) and the discounted total (the
    objective, net of resale)."""
    return {"capex_usd": book.capex_usd, "energy_usd": book.energy_usd,
            "spend_usd": sum(_spend(spec, ps) for ps in book.periods), "resale_usd": book.resale_usd,
            "discounted_gross_usd": sum(ps.discount_factor * _spend(spec, ps) for ps in book.periods),
            "discounted_usd": book.objective_usd}


def orderable_platforms(spec: PlanSpec, catalog: Catalog, p: int) -> list[str]:
    """The platforms period p allows that can be ordered then (catalog lifecycle; all allowed without one):
    the generations side by side, beside the platform the period runs."""
    chosen = spec.periods[p].scenario.constraints.platforms
    allowed = [chosen] if isinstance(chosen, str) else chosen or [x.id for x in catalog.platforms]
    return [x for x in allowed if spec.orderable(p, x)]


def _comparison(result: Any) -> dict:
    spec = result.spec
    if not result.from_scratch and result.up_front is None:  # `plan --no-compare`: nothing to report, not $0
        return {"computed": False, "note": "not computed (--no-compare)", "from_scratch": None, "up_front": None}
    scratch = []
    for period, outcome in zip(spec.periods, result.from_scratch):
        row: dict[str, Any] = {"label": period.label, "status": outcome.status}
        if outcome.ledger is not None:
            ps, design = outcome.ledger.periods[0], outcome.designs[0]
            row.update(architecture=design.label, gpus=design.cost.gpus, capex_usd=ps.capex_usd,
                       spend_usd=_spend(spec, ps), discounted_usd=ps.discount_factor * _spend(spec, ps))
        else:
            row["explanation"] = outcome.explanation
        scratch.append(row)
    solved = [r for r in scratch if "discounted_usd" in r]
    out: dict[str, Any] = {"computed": True, "from_scratch": {
        "what": "each period solved on its own from the owned inventory, as if earlier purchases had vanished "
                "(the sweep's independent answers), at that period's prices and discount",
        "periods": scratch, "spend_usd": sum(r["spend_usd"] for r in solved),
        "discounted_usd": sum(r["discounted_usd"] for r in solved) if len(solved) == len(scratch) else None}}
    up = result.up_front
    if up is not None:
        entry: dict[str, Any] = {"what": "one architecture, everything bought in the first period, every period's job "
                                         "run on it", "status": up.status}
        if up.ledger is not None:
            entry.update(architecture=up.designs[-1].label, gpus=up.designs[-1].cost.gpus,
                         capex_usd=up.ledger.capex_usd, **{k: v for k, v in totals(spec, up.ledger).items()
                                                            if k in ("spend_usd", "discounted_usd")})
        else:
            entry["explanation"] = up.explanation
        out["up_front"] = entry
    manual = getattr(result, "manual", None)
    if manual is not None:
        entry = {"what": "the best manual schedule: the final period's architecture (its from-scratch answer), every "
                         "period's job run on it, bought when needed", "status": manual.status}
        if manual.ledger is not None:
            entry.update(architecture=manual.designs[-1].label, gpus=manual.designs[-1].cost.gpus,
                         capex_usd=manual.ledger.capex_usd, **{k: v for k, v in totals(spec, manual.ledger).items()
                                                                if k in ("spend_usd", "discounted_usd")})
        else:
            entry["explanation"] = manual.explanation
        out["manual"] = entry
    return out


def plan_report(result: Any) -> dict:
    """The plan's JSON document."""
    spec, plan = result.spec, result.plan
    out: dict[str, Any] = {
        "schema": SCHEMA, "scenario": spec.scenario_name, "status": plan.status, "objective": spec.objective,
        "architectures": spec.architectures, "period_years": spec.period_years, "discount_rate": spec.discount_rate,
        "start_year": spec.start_year, "solve_time_s": plan.solve_time_s, "gap": plan.gap,
    }
    if plan.ledger is None:
        out["explanation"] = plan.explanation
        out["periods"] = [{"index": p.index, "label": p.label, "values": p.values} for p in spec.periods]
        return out
    out["owned_gpus"] = owned_gpus(result.catalog, spec.owned)
    out["periods"] = [_period_row(spec, result.catalog, p, d, plan.clusters, plan.designs, ps)
                      for p, (d, ps) in enumerate(zip(plan.designs, plan.ledger.periods))]
    out["totals"] = totals(spec, plan.ledger)
    out["comparison"] = _comparison(result)
    out["timings_s"] = result.timings_s
    out["model"] = plan.stats
    out["solver"] = result.solver
    out["notes"] = spec.notes
    return out
