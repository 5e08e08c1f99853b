"""The ledger of a plan: given the design that runs each period and the cluster it runs on, what is
bought when, and what is spent (the plan's evaluator; the MILP's objective is checked against it and
the exhaustive enumeration of plans uses it).

Each cluster keeps its own stock per key (costing.Stock: a catalog part, or a link's module end, or
an extra rule on a platform); the owned inventory belongs to cluster 1, the one that runs period 0.
Cluster c needs N_p units of a key in each period p it runs, and holds O (owned, cluster 1 only)
plus everything bought for it so far. A unit bought in period q costs

    c_q = P · φ_q · (1 + contingency_q) · (1 + F if hardware) · δ_q

so the cheapest purchases that keep the stock at the need are, per key (lot sizing without holding
cost): the level M_p = max(0, max_{p' ≤ p, p' run by c} N_p' − O) is reached by buying
M_p − M_{p−1} units in the cheapest period q ≤ p (the latest of equal ones) in which the part is
orderable (plan/lifecycle.py; none: NotOrderable); φ is the part's lifecycle price trend where it has
one, else its category's factor. With a budget cap per period the model's own purchases are used
instead (checked to cover every need).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import costing
from ..errors import ConsistencyError
from ..inputs.inventory import owned_kind
from ..inputs.schema import Catalog
from ..results import Design
from .periods import PlanSpec
from .resale import resale_usd


@dataclass(frozen=True)
class Purchase:
    """Units of one stock key bought in one period for one cluster, at the period's price factor."""

    period: int
    cluster: int
    key: str
    part: str
    category: str
    quantity: int
    unit_price_usd: float
    price_factor: float
    lead_time_weeks: float | None = None  # the catalog's quoted lead time of the part (None = not known)

    @property
    def extended_usd(self) -> float:
        return self.quantity * self.unit_price_usd * self.price_factor

    def to_dict(self) -> dict:
        out = {"cluster": self.cluster, "key": self.key, "part": self.part, "category": self.category,
               "quantity": self.quantity, "unit_price_usd": self.unit_price_usd, "price_factor": self.price_factor,
               "extended_usd": self.extended_usd}
        if self.lead_time_weeks is not None:
            out["lead_time_weeks"] = self.lead_time_weeks
        return out


def lead_time_weeks(design: Design, part: str) -> float | None:
    """The longest quoted lead time of the design's BOM lines of `part` (None when none is quoted)."""
    weeks = [x.lead_time_weeks for x in design.cost.bom if x.part == part and x.lead_time_weeks is not None]
    return max(weeks) if weeks else None


@dataclass
class PeriodSpend:
    """One period's purchases and spend: capex = hardware + F·hardware + extra lines + contingency."""

    index: int
    cluster: int
    purchases: list[Purchase]
    hardware_usd: float
    extra_usd: float
    fraction_usd: float
    contingency_usd: float
    energy_usd: float
    discount_factor: float
    held: dict = field(default_factory=dict)  # (cluster, key) → units held after this period's purchases
    gpus_owned: int = 0
    resale_usd: float = 0.0  # hardware sold at the end of this period (plan.resale_fraction; plan/resale.py)

    @property
    def capex_usd(self) -> float:
        return self.hardware_usd + self.fraction_usd + self.extra_usd + self.contingency_usd


@dataclass
class Ledger:
    periods: list[PeriodSpend]
    objective: str

    @property
    def capex_usd(self) -> float:
        return sum(p.capex_usd for p in self.periods)

    @property
    def energy_usd(self) -> float:
        return sum(p.energy_usd for p in self.periods)

    @property
    def resale_usd(self) -> float:
        return sum(p.resale_usd for p in self.periods)

    @property
    def objective_usd(self) -> float:
        """Σ_p δ_p · (capex_p + energy_p if TCO − resale_p)."""
        tco = self.objective == "tco"
        return sum(p.discount_factor * (p.capex_usd + (p.energy_usd if tco else 0.0) - p.resale_usd)
                   for p in self.periods)


class NotOrderable(ValueError):
    """A plan needs a part in a period when no period up to it can order it (its lifecycle window)."""


def unit_cost(spec: PlanSpec, q: int, st: costing.Stock) -> float:
    """c_q: the discounted cost of one unit of a stock key bought in period q, every rule applied."""
    period = spec.periods[q]
    con = period.scenario.constraints
    fraction = costing.hardware_fraction(period.scenario.extra_costs) if st.hardware else 0.0
    return (st.unit_price_usd * spec.factor(q, st.category, st.part) * (1 + con.contingency_fraction)
            * (1 + fraction) * period.discount_factor)


def cheapest_purchases(spec: PlanSpec, designs: list[Design], clusters: list[int], first_period_only: bool = False) -> dict:
    """(period, cluster, key) → units: the cheapest purchases that keep each cluster's stock at its
    designs' needs (the level rule of the module docstring); with `first_period_only` everything is
    bought in period 0."""
    out: dict = {}
    for c in sorted(set(clusters)):
        runs = [p for p, cl in enumerate(clusters) if cl == c]
        keys: dict[str, costing.Stock] = {}
        for p in runs:
            for key, st in designs[p].cost.stock.items():
                keys.setdefault(key, st)
        for key, st in keys.items():
            level = 0
            owned = st.owned if c == 1 else 0
            for p in runs:
                need = max(0, designs[p].cost.stock[key].needed - owned) if key in designs[p].cost.stock else 0
                if need > level:
                    costs = [(unit_cost(spec, q, st), -q) for q in range(1 if first_period_only else p + 1)
                             if spec.orderable(q, st.part)]
                    if not costs:
                        raise NotOrderable(f"period {p} needs {st.part}, which no period up to it can order "
                                           f"({spec.lifecycle.window_text(st.part) if spec.lifecycle else ''})")
                    q = -min(costs)[1]
                    out[q, c, key] = out.get((q, c, key), 0) + need - level
                    level = need
    return out


def _check_cover(designs: list[Design], clusters: list[int], bought: dict) -> None:
    """Every need of every period is held: owned (cluster 1) + bought so far ≥ needed."""
    for p, (design, c) in enumerate(zip(designs, clusters)):
        for key, st in design.cost.stock.items():
            held = (st.owned if c == 1 else 0) + sum(n for (q, cl, k), n in bought.items() if cl == c and k == key and q <= p)
            if held < st.needed:
                raise ConsistencyError(f"period {p}: {key} holds {held} but the design needs {st.needed}")


def ledger(spec: PlanSpec, catalog: Catalog, designs: list[Design], clusters: list[int],
           bought: dict | None = None, first_period_only: bool = False) -> Ledger:
    """Price a plan: the purchases (the cheapest ones, or `bought` as given per (period, cluster, key)),
    each period's capex, energy (the running design's facility kW for a period) and discount."""
    cheapest = cheapest_purchases(spec, designs, clusters, first_period_only)
    if bought is None:
        bought = cheapest
    else:  # free parts (passive copper ends) need not be in the model: take them as the cheapest rule does
        free = {key for d in designs for key, st in d.cost.stock.items() if st.unit_price_usd == 0}
        bought = {**{k: n for k, n in cheapest.items() if k[2] in free}, **{k: n for k, n in bought.items() if k[2] not in free}}
    _check_cover(designs, clusters, bought)
    stock: dict = {}
    for design, c in zip(designs, clusters):
        for key, st in design.cost.stock.items():
            stock.setdefault((c, key), st)
    held = {(c, key): (st.owned if c == 1 else 0) for (c, key), st in stock.items()}
    gpus = owned_gpus(catalog, spec.owned)
    out = []
    for p, design in enumerate(designs):
        purchases = []
        for (q, c, key), n in sorted(bought.items()):
            if q == p and n > 0:
                st = stock[c, key]
                if st.unit_price_usd > 0:  # free parts (passive copper ends) are held, not listed, as in the BOM
                    purchases.append(Purchase(p, c, key, st.part, st.category, n, st.unit_price_usd,
                                              spec.factor(p, st.category, st.part), lead_time_weeks(design, st.part)))
                held[c, key] += n
                gpus += n * _gpus_per_unit(catalog, st)
        out.append(_period_spend(spec, p, design, clusters[p], purchases, dict(held), gpus))
    for spend, usd in zip(out, resale_usd(spec, designs, clusters, [x.held for x in out], stock), strict=True):
        spend.resale_usd = usd
    return Ledger(out, spec.objective)


def _period_spend(spec: PlanSpec, p: int, design: Design, cluster: int, purchases: list[Purchase], held: dict,
                  gpus: int) -> PeriodSpend:
    period = spec.periods[p]
    hardware = sum(x.extended_usd for x in purchases if x.category != "extra")
    extra = sum(x.extended_usd for x in purchases if x.category == "extra")
    fraction = costing.hardware_fraction(period.scenario.extra_costs) * hardware
    contingency = period.scenario.constraints.contingency_fraction * (hardware + fraction + extra)
    c = design.cost
    energy = costing.energy_usd(c.facility_power_kw, spec.period_years, c.usd_per_kwh)
    return PeriodSpend(p, cluster, purchases, hardware, extra, fraction, contingency, energy, period.discount_factor,
                       held, gpus)


def gpus_per_unit(catalog: Catalog, platform_id: str) -> int:
    """GPUs in one unit of a platform (a node, or a whole domain)."""
    plat = catalog.by_id("platforms")[platform_id]
    return int(plat.gpus_per_node * costing.nodes_per_unit(plat))


def _gpus_per_unit(catalog: Catalog, st: costing.Stock) -> int:
    """GPUs in one unit of a compute key; 0 for any other key."""
    return gpus_per_unit(catalog, st.part) if st.category == "compute" and st.key == st.part else 0


def owned_gpus(catalog: Catalog, owned: dict[str, int]) -> int:
    """GPUs in an owned inventory (every owned platform, used or not)."""
    return sum(n * gpus_per_unit(catalog, i) for i, n in owned.items() if owned_kind(catalog, i) == "platforms")
