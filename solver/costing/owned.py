"""Owned inventory and idle inventory (SPEC §6.1), split out of `costing/table.py` (issue #26).

Lines are grouped per *stock key* (`Stock`: the catalog part a line draws from; a link's cable and
the modules at its two ends are three keys): bought = max(0, needed − owned), cost on bought, power on
everything the design uses; `purchase_usd` applies contingency and the fraction-of-hardware rules,
and `energy_usd`/`tco_usd` the years · 8,760 h · facility kW · $/kWh term. `owned_use` reports each
owned part's use by a design and the value of what sits idle. The package's __init__.py exports the names
other stages use. This module imports nothing from table.py (`Line` comes from lines.py), so no cycle.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..inputs.inventory import owned_kind
from ..inputs.schema import Catalog, Facility, Scenario
from ..units import HOURS_PER_YEAR
from . import facility as orderable
from .lines import Line

# ----------------------------------------------------------------------------------- owned inventory


def price_category(category: str) -> str:
    """The price-factor category of a BOM category (spares are priced like compute; site lines as
    costing.facility.SITE_PRICE_CATEGORY says)."""
    return "compute" if category == "spares" else orderable.SITE_PRICE_CATEGORY.get(category, category)


@dataclass
class Stock:
    """One stock key of a design: what it needs (Σ of its lines' quantities: an int or a model
    expression), how many units of it are owned, and its unit price."""

    key: str
    category: str  # price-factor category: compute, nic, switch, link, rack, extra
    part: str
    unit_price_usd: float
    needed: Any
    owned: int

    @property
    def hardware(self) -> bool:
        """Hardware keys carry the fraction-of-hardware rules; extra keys do not."""
        return self.category != "extra"

    def bought(self) -> int:
        """bought = max(0, needed − owned), for integer (or lower-bound) quantities."""
        return max(0, self.needed - self.owned)


def stock_of(lines: list[Line], owned: dict[str, int] | None = None) -> dict[str, Stock]:
    """The lines grouped by stock key: needed = Σ quantity, owned units, unit price (equal on every
    line of a key: compute and spares, leaf and spine switches, compute and network racks)."""
    out: dict[str, Stock] = {}
    owned = owned or {}
    for line in lines:
        key = line.key
        st = out.get(key)
        if st is None:
            st = out[key] = Stock(key, price_category(line.category), line.part, line.unit_price_usd, 0,
                                  line.owned_units(owned))
        st.needed = st.needed + line.quantity
    return out


def purchase_usd(stock: dict[str, Stock], bought: dict[str, Any], contingency_fraction: float,
                 hardware_fraction: float = 0.0, factors: dict[str, float] | None = None,
                 part_factors: dict[str, float] | None = None) -> Any:
    """capex of what is bought = (1 + contingency)·[(1 + F)·Σ_hardware price·φ·bought + Σ_extra price·φ·bought],
    φ = the part's own factor (`part_factors`, a lifecycle price trend), else the price factor of the key's
    category (1 without `factors`); `bought` per stock key may be ints or model expressions."""
    hardware: Any = 0
    extra: Any = 0
    for key, st in stock.items():
        φ = (part_factors or {}).get(st.part, (factors or {}).get(st.category, 1.0))
        usd = st.unit_price_usd * φ * bought[key]
        if st.hardware:
            hardware = hardware + usd
        else:
            extra = extra + usd
    return (1 + contingency_fraction) * ((1 + hardware_fraction) * hardware + extra)


def lines_capex_usd(lines: list[Line], contingency_fraction: float, owned: dict[str, int] | None = None,
                    hardware_fraction: float = 0.0) -> Any:
    """capex = (1 + contingency) · Σ quantity · unit price (an int, float or model expression), with
    the fraction-of-hardware rules; with `owned` (integer or lower-bound quantities only) each stock
    key pays for max(0, needed − owned)."""
    stock = stock_of(lines, owned)
    bought = {key: (st.bought() if owned else st.needed) for key, st in stock.items()}
    return purchase_usd(stock, bought, contingency_fraction, hardware_fraction)


def lines_power_kw(lines: list[Line]) -> Any:
    """IT power = Σ quantity · power_w / 1000 (compute units, NICs, switches, link modules)."""
    return sum(line.quantity * line.power_w for line in lines) / 1000.0


def energy_usd(facility_power_kw: Any, years: float, usd_per_kwh: float) -> Any:
    """years · 8,760 h · facility kW · $/kWh."""
    return years * HOURS_PER_YEAR * facility_power_kw * usd_per_kwh


def tco_usd(capex: float, facility_power_kw: float, years: float, usd_per_kwh: float) -> float:
    """TCO = capex + years · 8,760 h · facility kW · $/kWh."""
    return capex + energy_usd(facility_power_kw, years, usd_per_kwh)


def pue_and_usd_per_kwh(scenario: Scenario, facility: Facility) -> tuple[float, float]:
    """scenario.tco.pue / usd_per_kwh override the facility's."""
    pue = scenario.tco.pue if scenario.tco.pue is not None else facility.pue
    price = scenario.tco.usd_per_kwh if scenario.tco.usd_per_kwh is not None else facility.usd_per_kwh
    return pue, price


# ----------------------------------------------------------------------------------- idle inventory


@dataclass(frozen=True)
class OwnedUse:
    """One owned catalog part: how many the design uses, how many sit idle, and what the idle ones
    are worth at today's catalog price (a link at its per-link average: cable plus module shares)."""

    part: str
    kind: str  # platforms | nics | switches | links | racks
    owned: int
    used: int
    unit_price_usd: float
    purchase_year: int | None

    @property
    def idle(self) -> int:
        return self.owned - self.used

    @property
    def idle_value_usd(self) -> float:
        return self.idle * self.unit_price_usd

    def to_dict(self) -> dict:
        out = asdict(self)
        out.update(idle=self.idle, idle_value_usd=self.idle_value_usd)
        return out


def owned_use(scenario: Scenario, catalog: Catalog, stock: dict[str, Stock]) -> list[OwnedUse]:
    """Every owned part with its use by the design whose needs are `stock`: used = min(owned, the
    design's need of that part's own key); a part the design does not buy at all is wholly idle."""
    out = []
    for ident, item in scenario.inventory.items():
        if item.count == 0:
            continue
        kind = owned_kind(catalog, ident) or "unknown"  # known after check_against_catalog
        entry: Any = catalog.by_id(kind).get(ident) if kind != "unknown" else None
        price = entry.usd_per_link if kind == "links" else getattr(entry, "unit_price_usd", 0.0)
        need = stock[ident].needed if ident in stock else 0
        out.append(OwnedUse(ident, kind, item.count, min(item.count, need), price, item.purchase_year))
    return out


# ----------------------------------------------------------------------------------- ownership (SPEC §6.3)

OWN_INCLUDES = (
    "depreciation: (capex − residual value) over the economic life",
    "financing: cost of capital on the average book value (capex + residual) ÷ 2",
    "colocation or building: $/kW-month on the IT load",
    "support contracts: a fraction of capex per year",
    "operations staff: $ per owned GPU per year",
    "energy of the busy hours: facility kW (IT × PUE) × $/kWh",
)
OWN_LEAVES_OUT = (
    "energy while idle (charged only for busy hours)",
    "taxes, insurance and software licences beyond the support fraction",
    "lead time to procure and install (renting starts sooner)",
    "rental price changes over the life (today's prices throughout)",
)


@dataclass(frozen=True)
class OwnershipCost:
    """Owning a cluster for its economic life, and a run's share of it (SPEC §6.3):

        L            = depreciation_years · 8,760 h            (life hours)
        residual     = residual_fraction · capex
        depreciation = capex − residual
        financing    = cost_of_capital · (capex + residual) / 2 · depreciation_years
        colocation   = colocation_usd_per_kw_month · IT kW · 12 · depreciation_years
        support      = support_fraction_per_year · capex · depreciation_years
        staff        = staff_usd_per_gpu_year · owned GPUs · depreciation_years
        fixed        = depreciation + financing + colocation + support + staff     (paid busy or not)
        energy/h     = facility kW · $/kWh
        own for h hours = fixed · h / L + energy/h · h          (the run's share: the cluster is busy for
                                                                 its whole life, this run for h of it)
    """

    capex_usd: float
    it_kw: float
    facility_kw: float
    usd_per_kwh: float
    gpus: int  # owned GPUs (spares included): staff scale with them
    hours: float  # the run (or horizon), h
    years: float  # depreciation life
    residual_fraction: float
    cost_of_capital: float
    colocation_usd_per_kw_month: float
    support_fraction_per_year: float
    staff_usd_per_gpu_year: float
    sources: tuple = ()  # ((field, source), ...)

    @property
    def life_hours(self) -> float:
        return self.years * HOURS_PER_YEAR

    @property
    def residual_usd(self) -> float:
        return self.residual_fraction * self.capex_usd

    def life_usd(self) -> dict[str, float]:
        """Each fixed cost over the whole life."""
        c, y = self.capex_usd, self.years
        return {"depreciation": c - self.residual_usd,
                "financing": self.cost_of_capital * (c + self.residual_usd) / 2.0 * y,
                "colocation": self.colocation_usd_per_kw_month * self.it_kw * 12.0 * y,
                "support": self.support_fraction_per_year * c * y,
                "staff": self.staff_usd_per_gpu_year * self.gpus * y}

    @property
    def fixed_life_usd(self) -> float:
        return sum(self.life_usd().values())

    @property
    def energy_usd_per_hour(self) -> float:
        return self.facility_kw * self.usd_per_kwh

    @property
    def share(self) -> float:
        """The run's share of the life: h / L."""
        return self.hours / self.life_hours

    def run_usd(self) -> dict[str, float]:
        """Each cost line of the run: the fixed ones times h / L, and the energy of its hours."""
        out = {k: v * self.share for k, v in self.life_usd().items()}
        out["energy"] = self.energy_usd_per_hour * self.hours
        return out

    @property
    def own_usd(self) -> float:
        return sum(self.run_usd().values())

    def to_dict(self) -> dict:
        return {"hours": self.hours, "life_years": self.years, "life_hours": self.life_hours, "share": self.share,
                "capex_usd": self.capex_usd, "residual_usd": self.residual_usd,
                "life_usd": self.life_usd(), "fixed_life_usd": self.fixed_life_usd,
                "run_usd": self.run_usd(), "own_usd": self.own_usd,
                "energy_usd_per_hour": self.energy_usd_per_hour,
                "inputs": {"depreciation_years": self.years, "residual_fraction": self.residual_fraction,
                           "colocation_usd_per_kw_month": self.colocation_usd_per_kw_month,
                           "support_fraction_per_year": self.support_fraction_per_year,
                           "staff_usd_per_gpu_year": self.staff_usd_per_gpu_year,
                           "cost_of_capital": self.cost_of_capital, "it_kw": self.it_kw,
                           "facility_kw": self.facility_kw, "usd_per_kwh": self.usd_per_kwh, "gpus": self.gpus},
                "sources": dict(self.sources), "includes": list(OWN_INCLUDES), "leaves_out": list(OWN_LEAVES_OUT)}


def ownership_cost(ownership: Any, capex_usd: float, it_kw: float, facility_kw: float, usd_per_kwh: float,
                   gpus: int, hours: float) -> OwnershipCost:
    """The OwnershipCost of a design under a scenario's `ownership:` block (inputs/ownership_schema.py)."""
    o = ownership
    return OwnershipCost(capex_usd, it_kw, facility_kw, usd_per_kwh, gpus, hours, o.depreciation_years,
                         o.residual_fraction, o.cost_of_capital, o.colocation_usd_per_kw_month,
                         o.support_fraction_per_year, o.staff_usd_per_gpu_year, tuple(o.sources().items()))
