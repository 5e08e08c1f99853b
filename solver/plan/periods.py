"""A scenario's `plan:` block → one validated scenario per period, with its price factors and discount.

Period p (0-based) of a plan with period length Y years:

    value of a grown field   v_p = v_0 · factor^p            (integer fields rounded half up, as in sweeps)
    price factor, category c φ_pc = period.price_factors[c], else (1 + price_change_per_year[c])^(p·Y), else 1
    discount factor          δ_p = (1 + discount_rate)^−(p·Y)

An explicit period's `set` values override the growth rules. Every period scenario is validated
against the catalog before anything is solved; a problem is reported at the plan block's line.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, Problem
from ..inputs.scenario import LoadedScenario, check_against_catalog, load_scenario
from ..inputs.schema import PRICE_CATEGORIES, Catalog, Plan, PlanGrowth, Scenario, SweepGrowth, SweepParameter
from ..optimize.user_rows import refuse_user_rows
from ..sweep.plan import field_kind, get_path, make_axis, set_path
from .lifecycle import plan_lifecycle

FORBIDDEN = ("plan", "sweep", "top_k", "inventory", "extra_costs", "name", "catalog")


@dataclass
class Period:
    """One period of a plan: its scenario, what was changed in it, its price factors and discount factor."""

    index: int
    label: str
    year: float | None
    values: dict[str, float]
    scenario: Scenario
    price_factors: dict[str, float]
    discount_factor: float

    @property
    def step_time_s(self) -> float:
        return self.scenario.target_step_time_s()


@dataclass
class PlanSpec:
    """Everything a plan solve needs: the periods and the plan's options."""

    scenario_name: str
    periods: list[Period]
    architectures: str  # keep_one | allow_second
    objective: str  # capex | tco
    period_years: float
    discount_rate: float
    start_year: int | None
    owned: dict[str, int]
    notes: list[str] = field(default_factory=list)
    lifecycle: Any = None  # plan/lifecycle.PlanLifecycle: orderable windows and price trends (None: none apply)
    resale_fraction: float | None = None  # plan.resale_fraction: retire and resell (plan/resale.py); None: kept

    def only(self, periods: list[Period], architectures: str | None = None) -> PlanSpec:
        """The same plan on a subset of its periods (the from-scratch comparison solves one at a time)."""
        return PlanSpec(self.scenario_name, periods, architectures or self.architectures, self.objective,
                        self.period_years, self.discount_rate, self.start_year, self.owned, list(self.notes),
                        self.lifecycle, self.resale_fraction)

    def factor(self, p: int, category: str, part: str) -> float:
        """The price factor of a part bought in period p: its lifecycle trend, else its category's φ_pc."""
        period = self.periods[p]
        φ = period.price_factors[category]
        return φ if self.lifecycle is None else self.lifecycle.factor(period.index, part, φ)

    def orderable(self, p: int, part: str) -> bool:
        """Whether the part can be ordered in period p (its lifecycle window; always without one)."""
        return self.lifecycle is None or self.lifecycle.orderable(self.periods[p].index, part)


def price_factors(plan: Plan, p: int) -> dict[str, float]:
    """φ_pc for every category: the period's own factor, else the yearly change compounded over p·Y years."""
    own: dict[str, float] = {}
    if isinstance(plan.periods, list):
        own = {str(c): f for c, f in plan.periods[p].price_factors.items()}
    change = {str(c): r for c, r in plan.price_change_per_year.items()}
    years = p * plan.period_years
    return {c: own.get(c, (1 + change.get(c, 0.0)) ** years) for c in PRICE_CATEGORIES}


FACTOR_RANGE = (1e-6, 1e6)  # a compounded price factor outside this is an input error, not a number to solve with


def _compounded(change: float, years: float) -> float:
    try:
        return float((1 + change) ** years)
    except OverflowError:
        return math.inf


def price_factor_problems(plan: Plan, doc) -> list[Problem]:
    """Each yearly price change that compounds, over the plan's length, to a factor outside
    FACTOR_RANGE (an overflow included): located at the change, with the period and the factor."""
    problems = []
    low, high = FACTOR_RANGE
    for cat, change in plan.price_change_per_year.items():
        for p in range(plan.count):
            factor = _compounded(change, p * plan.period_years)
            if not low <= factor <= high:
                problems.append(doc.problem(("plan", "price_change_per_year", str(cat)), (
                    f"compounds to a price factor of {factor:.3g} by period {p} ({p} × {plan.period_years:g} years "
                    f"at {change:+.0%} a year); a factor must stay between {low:g} and {high:g}: lower the change, "
                    "shorten period_years or plan fewer periods"), change))
                break
    last = (plan.count - 1) * plan.period_years
    if plan.discount_rate and 1 / _compounded(plan.discount_rate, last) < low:
        problems.append(doc.problem(("plan", "discount_rate"), (
            f"discounts the last period ({last:g} years away) by a factor below {low:g}: lower the rate, shorten "
            "period_years or plan fewer periods"), plan.discount_rate))
    return problems


def discount_factor(plan: Plan, p: int) -> float:
    """δ_p = (1 + r)^−(p·Y)."""
    return float((1 + plan.discount_rate) ** -(p * plan.period_years))


def _label(plan: Plan, p: int) -> tuple[str, float | None]:
    own = plan.periods[p].label if isinstance(plan.periods, list) else None
    year = plan.start_year + p * plan.period_years if plan.start_year is not None else None
    if own:
        return own, year
    if year is not None:
        return (f"{year:g}", year)
    return f"period {p}", None


def named(label: str) -> str:
    """'period 2' stays; a year or a custom label reads 'period 2027'."""
    return label if label.startswith("period") else f"period {label}"


def _growth_values(rule: PlanGrowth, base: dict, count: int) -> list[float]:
    """v_p = v_0 · factor^p for p < count, checked and rounded like the sweep's growth (make_axis)."""
    field_kind(rule.path)
    if count > 1:
        param = SweepParameter(path=rule.path, growth=SweepGrowth(factor=rule.factor, steps=count - 1),
                               round_to_int=rule.round_to_int)
    else:  # one period: v_0 alone (a sweep's growth needs a step)
        start = get_path(base, rule.path)
        if not isinstance(start, (int, float)) or isinstance(start, bool):
            raise ValueError(f"growth starts from the scenario's value of {rule.path}, which is not set to a number")
        param = SweepParameter(path=rule.path, values=[float(start)], round_to_int=rule.round_to_int)
    return list(make_axis(param, base, ()).values)


def _base(ls: LoadedScenario) -> dict:
    data = ls.scenario.model_dump(mode="json")
    for key in ("plan", "sweep"):
        data.pop(key, None)
    data["top_k"] = 1
    data["catalog"] = []  # the merged catalog travels with the plan
    return data


def _period_values(ls: LoadedScenario, plan: Plan, base: dict) -> list[dict[str, float]]:
    """Per period, the field values the growth rules and explicit `set`s give (validated paths)."""
    doc = ls.doc
    count = plan.count
    values: list[dict[str, float]] = [{} for _ in range(count)]
    problems: list[Problem] = []
    first_rule: dict[str, int] = {}
    for g, rule in enumerate(plan.growth):
        try:
            if rule.path in first_rule:  # the later rule would silently win
                raise ValueError(f"a second growth rule for {rule.path} (the first is plan.growth[{first_rule[rule.path]}]): "
                                 "give one rule per field")
            first_rule[rule.path] = g
            if rule.path.split(".")[0] in FORBIDDEN:
                raise ValueError(f"'{rule.path.split('.')[0]}' cannot grow in a plan")
            for p, v in enumerate(_growth_values(rule, base, count)):
                values[p][rule.path] = v
        except ValueError as exc:
            problems.append(doc.problem(("plan", "growth", g, "path"), str(exc), rule.path))
    for p, period in enumerate(plan.periods if isinstance(plan.periods, list) else []):
        for path, value in period.set.items():
            try:
                kind = field_kind(path)
                if path.split(".")[0] in FORBIDDEN:
                    raise ValueError(f"'{path.split('.')[0]}' cannot be set per period")
                if kind == "int" and value != int(value):
                    raise ValueError(f"{path} is an integer field; {value:g} is not whole")
                values[p][path] = int(value) if kind == "int" else value
            except ValueError as exc:
                problems.append(doc.problem(("plan", "periods", p, "set", path), str(exc), value))
    if problems:
        raise InputError(problems)
    return values


def plan_periods(ls: LoadedScenario, cat: Catalog) -> PlanSpec:
    """Build and validate every period scenario of the scenario's `plan:` block."""
    sc, doc = ls.scenario, ls.doc
    plan = sc.plan
    if plan is None:
        raise InputError([doc.problem(("plan",), "the scenario has no `plan:` block: add one with the periods "
                                      "(see docs/plan.md), or use `fabricplan solve` for one purchase")])
    if sc.objective not in ("capex", "tco"):
        raise InputError([doc.problem(("objective",), "a plan minimises discounted spend: the objective must be "
                                      "capex or tco", sc.objective)])
    if bad_factors := price_factor_problems(plan, doc):
        raise InputError(bad_factors)
    refuse_user_rows(ls, (), "the multi-period plan")
    base = _base(ls)
    problems, periods = [], []
    site_notes: list[str] = []
    for p, values in enumerate(_period_values(ls, plan, base)):
        data = copy.deepcopy(base)
        for path, value in values.items():
            set_path(data, path, value)
        label, year = _label(plan, p)
        if sc.site is not None:  # the power energised by the period's start caps it (plan/site_phases.py)
            site_notes.append(_apply_site(ls, cat, data, p))
        try:
            point = load_scenario(data, display=f"<plan period {label}>")
            check_against_catalog(point, cat)
        except InputError as exc:
            first = exc.problems[0]
            loc = ("plan", "periods", p) if isinstance(plan.periods, list) else ("plan",)
            changed = ", ".join(f"{k} = {v:g}" for k, v in values.items()) or "no changes"
            problems.append(doc.problem(loc, f"{named(label)} ({changed}) is not a valid scenario: "
                                        f"{first.path}: {first.message}"))
            continue
        periods.append(Period(p, label, year, values, point.scenario, price_factors(plan, p), discount_factor(plan, p)))
    if problems:
        raise InputError(problems)
    spec = PlanSpec(sc.name, periods, plan.architectures, sc.objective, plan.period_years, plan.discount_rate,
                    plan.start_year, sc.owned_counts())
    spec.lifecycle = plan_lifecycle(cat, plan.start_year, plan.period_years, plan.count)
    spec.resale_fraction = plan.resale_fraction
    if spec.lifecycle is not None:  # the generations each period can order, side by side (catalog lifecycle:)
        for p, period in enumerate(spec.periods):
            chosen = period.scenario.constraints.platforms
            allowed = [chosen] if isinstance(chosen, str) else chosen or [x.id for x in cat.platforms]
            can = [x for x in allowed if spec.orderable(p, x)]
            spec.notes.append(f"{period.label}: orderable platforms {', '.join(can) or 'none (buy earlier or widen the allow-list)'}")
    if cat.lifecycle and plan.start_year is None:
        spec.notes.append("the catalog's lifecycle windows are not applied: the plan has no start_year")
    spec.notes += site_notes
    return spec


def _apply_site(ls: LoadedScenario, cat: Catalog, data: dict, p: int) -> str:
    """Cap period p's facility kW at the site power energised by its start (site_phase_cap[p]); the note."""
    from .site_phases import period_date, site_phase_cap_kw

    plan, site, doc = ls.scenario.plan, ls.scenario.site, ls.doc
    assert plan is not None
    assert site is not None
    if plan.start_year is None:
        raise InputError([doc.problem(("plan",), "a plan with a `site:` needs plan.start_year to date its periods "
                                      "against the site's energisation phases")])
    date = period_date(plan.start_year, plan.period_years, p)
    con = data.setdefault("constraints", {})
    chosen = con.get("platforms")
    try:
        cap, note = site_phase_cap_kw(site, date, [chosen] if isinstance(chosen, str) else chosen, cat)
    except ValueError:
        raise InputError([doc.problem(("site", "power"), f"no site power is energised by {date}, when plan period "
                                      f"{p} starts: start the plan later or add an earlier phase")]) from None
    own = con.get("facility_power_kw")
    con["facility_power_kw"] = cap if own is None else min(own, cap)
    data.pop("site", None)  # the period scenario is plain: its cap carries the site
    return note
