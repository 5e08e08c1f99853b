"""Cost, power and the bill of materials (SPEC §6): one category table for every consumer.

`bom_lines(parts, quantities)` is the bill-of-materials category table: compute units, spares,
scale-out NICs, switches by role, links by tier (cable and the module at each end), compute and
network racks. It prices *quantities* that may be plain integers (the evaluator, `design_cost`),
Pyomo expressions (the optimisation model's capex and power) or lower bounds (the bound pruning,
with every fabric and rack count at zero), so each cost rule is written once:

    extended = quantity · unit price            capex = (1 + contingency) · Σ extended
    IT kW    = Σ quantity · power_w / 1000      facility kW = IT kW · PUE
    TCO      = capex + years · 8,760 h · facility kW · $/kWh

Owned inventory (SPEC §6.1) is netted here too, per *stock key* (the catalog part a line draws
from; a link's cable and the modules at its two ends are three keys): bought = max(0, needed −
owned), cost on bought, power on everything the design uses. The extra cost lines by rule (storage,
front-end network, support, installation) are the `extra` category; a fraction-of-hardware rule
multiplies the hardware bought:

    capex = (1 + contingency) · [(1 + Σ fraction rules) · Σ_hardware price · bought + Σ_extra price · bought]

How many of each part a design needs is sized twice, on purpose: in closed form here and in the
fabric family (evaluator), and as linear rows in the model; the exhaustive-enumeration tests keep
the two in step.

The owned/idle inventory rules live in owned.py, the evaluator's BomLines in bom.py and the types every costing
module reads (Parts, Quantities, Line) in lines.py; none of them imports this module. The package's public face is
solver/costing/__init__.py.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import CatalogCannotBuild
from ..fabrics import DEFAULT_FAMILY, FabricSize, FabricSpec, family_vocabulary
from ..fabrics.breakout import port_mode
from ..fabrics.links import facility_of, link_for, link_parts
from ..fabrics.spares import pack_spares
from ..inputs.schema import Catalog, ExtraCost, Link, Nic, Platform, Rack, Scenario, Switch
from ..integers import ceil_int, floor_int
from . import facility as orderable
from .bom import BomLine, capex_usd, contingency_line, fraction_lines, it_power_kw, split_owned
from .lines import Line, Parts, Quantities
from .owned import Stock, energy_usd, lines_capex_usd, lines_power_kw, owned_use, pue_and_usd_per_kwh, stock_of, tco_usd

if TYPE_CHECKING:
    from ..failures import SpareRule

site_count = orderable.site_count

MODULE_ENDS = ("switch", "far")


# ----------------------------------------------------------------------------------- compute


def compute_units(platform: Platform, domains: int) -> int:
    """Units bought for whole domains: unit = node → domains·nodes_per_domain; unit = domain → domains."""
    return domains * platform.nodes_per_domain if platform.unit == "node" else domains


def nodes_per_unit(platform: Platform) -> int:
    return 1 if platform.unit == "node" else platform.nodes_per_domain


def spare_units_for(platform: Platform, domains: int, rule: SpareRule, gpus_per_domain_used: int | None = None) -> int:
    """Spare units for `domains` job domains: ⌈fraction · units⌉, or the availability rule (failures.spare_units)."""
    from ..failures import spare_units  # lazy: failures.py loads numpy, which `catalog` and `validate` never need

    return spare_units(platform, domains, gpus_per_domain_used, rule)


def job_nodes(platform: Platform, domains: int) -> int:
    """Nodes that run the job on `domains` domains (spares excluded): the count its fabric is sized for."""
    return compute_units(platform, domains) * nodes_per_unit(platform)


# ----------------------------------------------------------------------------------- racks


def units_per_rack(platform: Platform, rack: Rack) -> int:
    """Compute units per rack = min(⌊usable_kw / unit_power_kw⌋, ⌊usable_ru / unit_ru⌋).

    1 for a unit that is its own rack (NVL72). 0 means the unit does not fit in this rack.
    """
    if platform.unit_is_rack:
        return 1
    by_power = floor_int(rack.usable_kw / platform.unit_power_kw)
    by_space = floor_int(rack.usable_ru / platform.unit_ru)
    return min(by_power, by_space)


def compute_racks(platform: Platform, rack: Rack, units: int) -> int:
    """racks = units when the unit is a rack, else ⌈units / units_per_rack⌉."""
    if platform.unit_is_rack:
        return units
    per_rack = units_per_rack(platform, rack)
    if per_rack < 1:
        raise CatalogCannotBuild(
            f"platform {platform.id} ({platform.unit_power_kw:g} kW, {platform.unit_ru:g} RU) does not fit"
            f" in rack {rack.id} ({rack.usable_kw:g} kW, {rack.usable_ru} RU)"
        )
    return -(-units // per_rack)


def network_racks(switch: Switch, rack: Rack, switches: int) -> int:
    """racks = ⌈max(switches·ru / usable_ru, switches·power_w/1000 / usable_kw)⌉.

    Switches only (their optics are not counted against the rack's kW); RU is pooled across racks,
    so a switch is not forced to sit whole in one rack.
    """
    by_space = switches * switch.ru / rack.usable_ru
    by_power = switches * switch.power_w / 1000.0 / rack.usable_kw
    return ceil_int(max(by_space, by_power))


def rack_of(catalog: Catalog, rack_id: str) -> Rack:
    racks = catalog.by_id("racks")
    if rack_id not in racks:
        raise CatalogCannotBuild(f"facility names rack {rack_id!r}, which the catalog lacks (has: {sorted(racks)})")
    return racks[rack_id]


# ----------------------------------------------------------------------------------- parts


def parts_for(catalog: Catalog, platform: Platform, nic: Nic, switch: Switch, rails: int,
              extras: tuple[ExtraCost, ...] = (), capex_scope: str = "complete",
              fabric_family: str = DEFAULT_FAMILY) -> Parts:
    """The parts of one architecture; raises CatalogCannotBuild when no link from the nodes reaches or a
    rack is missing (higher tiers without a link option are left out: those tier counts cannot be built).
    The links are keyed by the family's link names (its vocabulary), each the catalog option of the family's
    catalog link key made for the switch's port split at the NIC's speed (`breakout`);
    `extras` are the scenario's extra cost rules; the NIC configuration and site lines come from the
    catalog (costing/facility.py), the site lines only with capex_scope `complete`."""
    facility = facility_of(catalog)
    split = breakout_of(switch, nic)
    words = family_vocabulary(fabric_family)
    links = {}
    for tier in words.tiers:
        try:
            links[tier.link] = link_for(catalog, switch, tier.catalog_link, split)
        except CatalogCannotBuild:
            if tier.link == words.node_link:
                raise
    config = orderable.config_for(catalog, platform.id, rails)
    orderable.twin_port_node_end(links, config, words.node_link)
    compute_rack = rack_of(catalog, facility.compute_rack)
    return Parts(platform=platform, nic=None if platform.includes_scaleout_nics else nic, switch=switch, rails_per_node=rails,
                 links=links, compute_rack=None if platform.unit_is_rack else compute_rack,
                 network_rack=rack_of(catalog, facility.network_rack), extras=tuple(extras),
                 nic_config=config, nic_label=nic.name,
                 site=orderable.site_lines_for(catalog, platform.id, capex_scope, switch.fabric),
                 spare_power_fraction=catalog.reliability.spare_idle_power_fraction if catalog.reliability else 1.0)


def module_price(link: Link, end: str) -> tuple[float, float, int]:
    """(usd, W, links per module) of the module at one end of a link."""
    if end == "switch":
        return link.switch_end_module_usd, link.switch_end_module_w, link.switch_end_links_per_module
    return link.far_end_module_usd, link.far_end_module_w, link.far_end_links_per_module


def _compute(parts: Parts, q: Quantities) -> list[Line]:
    p = parts.platform
    what = f"{p.name} (per {p.unit})"
    watts = p.unit_power_kw * 1000.0
    return [Line("compute", p.id, what, q.units, p.unit_price_usd, watts, p),
            Line("spares", p.id, f"spare {what}", q.spare_units, p.unit_price_usd, watts * parts.spare_power_fraction, p)]


def _nics(parts: Parts, q: Quantities) -> list[Line]:
    if parts.nic is None:
        return []
    n = parts.nic
    return [Line("nic", n.id, f"{n.name}, {parts.rails_per_node} per node", parts.rails_per_node * q.nodes, n.unit_price_usd, n.power_w, n)]


def _switches(parts: Parts, q: Quantities) -> list[Line]:
    s = parts.switch
    return [Line("switch", s.id, f"{role} switch: {s.name}", count, s.unit_price_usd, s.power_w, s)
            for role, count in q.switches.items()]


def _links(parts: Parts, q: Quantities) -> list[Line]:
    lines = []
    for tier, link in parts.links.items():
        if tier not in q.links:
            continue
        lines.append(Line("link", link.id, f"{tier} cable: {link.description}", q.links[tier], link.cable_usd, 0.0, link))
        for end in MODULE_ENDS:
            if (tier, end) in q.modules:
                usd, watts, per = module_price(link, end)
                name = "switch-end" if end == "switch" else "far-end"
                lines.append(Line("link", link.id, f"{tier} {name} module ({per} link/module)", q.modules[tier, end],
                                  usd, watts, link, stock=f"{link.id}/{name} module", owned_from=(link.id, 1, per)))
    return lines


def _racks(parts: Parts, q: Quantities) -> list[Line]:
    lines = []
    if parts.compute_rack is not None:  # a unit that is a rack (NVL72) ships in its own rack
        r = parts.compute_rack
        lines.append(Line("rack", r.id, f"compute rack: {r.name}", q.compute_racks, r.unit_price_usd, 0.0, r))
    r = parts.network_rack
    lines.append(Line("rack", r.id, f"network rack: {r.name}", q.network_racks, r.unit_price_usd, 0.0, r))
    return lines


def _extras(parts: Parts, q: Quantities) -> list[Line]:
    """Per-node and per-GPU extra cost rules (spares included); owned units of the design's platform
    bring their own. Fraction-of-hardware rules are not lines here: `purchase_usd` applies them."""
    p = parts.platform
    per_unit = nodes_per_unit(p)
    lines = []
    for e in parts.extras:
        what = f"{e.name}{': ' + e.description if e.description else ''}"
        if e.per_node_usd is not None:
            lines.append(Line("extra", e.name, f"{what} (per node)", q.nodes, e.per_node_usd, 0.0, e,
                              stock=f"{e.name}/{p.id}", owned_from=(p.id, per_unit, 1)))
        elif e.per_gpu_usd is not None:
            lines.append(Line("extra", e.name, f"{what} (per GPU)", q.nodes * p.gpus_per_node, e.per_gpu_usd, 0.0, e,
                              stock=f"{e.name}/{p.id}", owned_from=(p.id, per_unit * p.gpus_per_node, 1)))
    return lines


def _lines_of(make: Callable[[Any, Any], list[dict]]) -> Callable[[Parts, Quantities], list[Line]]:
    """A category function of costing/facility.py (which returns each line's fields) as Lines."""
    return lambda parts, q: [Line(**kw) for kw in make(parts, q)]


# The bill-of-materials categories, in report order: (name, what it holds, its lines).
CATEGORIES: tuple[tuple[str, str, Callable[[Parts, Quantities], list[Line]]], ...] = (
    ("compute", "compute units (nodes, or whole NVLink-domain racks) and spares", _compute),
    ("nic", "scale-out NICs, rails × nodes (unless the platform includes them)", _nics),
    ("switch", "switches, one line per role of the fabric family (leaf / spine / core on the trees)", _switches),
    ("link", "cables and the modules at both ends, per fabric tier", _links),
    ("rack", "compute and network racks", _racks),
    ("nic", "paid-for on-board NICs left uncabled ($0: in the unit price)", _lines_of(orderable.uncabled_nic_lines)),
    *((name, orderable.CATEGORY_NOTES[name], _lines_of(orderable.site_category_lines(name)))
      for name in orderable.SITE_CATEGORIES),
    ("extra", "cost lines by rule: storage, front-end network, installation (per node or GPU), support "
              "(fraction of the hardware)", _extras),
)
CATEGORY_ORDER = ("compute", "spares", "nic", "switch", "link", "rack", *orderable.SITE_CATEGORIES, "extra", "contingency")
BOM_CATEGORIES = CATEGORY_ORDER[:-1]  # the categories of priced lines (no contingency): every report's vocabulary


def bom_lines(parts: Parts, q: Quantities) -> list[Line]:
    """Every line of the table for these quantities (in category order)."""
    return [line for _, _, make in CATEGORIES for line in make(parts, q)]


# ----------------------------------------------------------------------------------- the evaluator's BOM
# (owned and idle inventory: costing/owned.py; the BOM lines: costing/bom.py)


def bill_of_materials(parts: Parts, q: Quantities, contingency_fraction: float = 0.0,
                      owned: dict[str, int] | None = None) -> list[BomLine]:
    """The table evaluated for integer quantities, each line split into its owned and bought shares:
    a line is dropped when its quantity is 0 or when it is both free and powerless (passive copper
    modules; an owned or included part is kept), so power stays a sum of lines; then one line per
    fraction-of-hardware rule, then the contingency line."""
    table = bom_lines(parts, q)
    return priced_lines(parts, table, stock_of(table, owned), contingency_fraction)


def priced_lines(parts: Parts, table: list[Line], stock: dict[str, Stock],
                 contingency_fraction: float = 0.0) -> list[BomLine]:
    """`bill_of_materials` of the table's lines (`bom_lines`) and their stock (`stock_of`, with the owned units)."""
    lines = split_owned(table, stock)
    lines = [x for x in lines if x.quantity > 0 and (x.unit_price_usd > 0 or x.power_w > 0 or x.owned or x.included)]
    lines += fraction_lines(parts, lines)
    if contingency_fraction > 0:
        lines.append(contingency_line(lines, contingency_fraction))
    return lines


# ----------------------------------------------------------------------------------- design


@dataclass(frozen=True)
class CostedDesign:
    """A fully sized cluster: fabric, racks, power and costs; every total is a sum of `bom`."""

    platform: str
    nic: str
    switch: str
    rails_per_node: int
    units: int
    spare_units: int
    nodes: int
    domains: int
    gpus: int
    fabric: FabricSize
    racks_compute: int
    racks_network: int
    racks: int
    it_power_kw: float
    facility_power_kw: float
    pue: float
    usd_per_kwh: float
    tco_years: float
    capex_usd: float
    tco_usd: float
    bom: list
    stock: dict = field(default_factory=dict)  # stock key → Stock (needs of the design, owned units)
    inventory: list = field(default_factory=list)  # OwnedUse per owned part (idle hardware and its value)
    cabled_spare_units: int = 0  # spare units in free ports of the job's fabric (fabrics/spares.py); the rest uncabled

    @property
    def job_nodes(self) -> int:
        """Nodes that run the job (spares excluded)."""
        return self.nodes * self.units // (self.units + self.spare_units)

    @property
    def cabled_nodes(self) -> int:  # the job's nodes and the spares packed into its free ports
        return self.nodes * (self.units + self.cabled_spare_units) // (self.units + self.spare_units)

    def fabric_dict(self) -> dict:
        """The SPEC §8.3 `fabric` keys (to_dict's, without building the bill of materials)."""
        f = self.fabric
        return {
            "family": f.family,
            "nic": self.nic,
            "rails_per_node": self.rails_per_node,
            "switch": self.switch,
            "tiers": f.tiers,
            "oversubscription": f.oversubscription,
            "above_pod_oversubscription": f.above_pod_oversubscription,
            "radix": f.k,
            "planes": f.planes,
            "pods_per_plane": f.pods,
            **{f"{role}_switches": f.switches.get(role, 0) for role in f.vocabulary.switch_roles},
            "links": dict(f.links),
        }

    def to_dict(self) -> dict:
        """The SPEC §8.3 design keys this module owns."""
        return {
            "platform": self.platform,
            "gpus": self.gpus,
            "nodes": self.nodes,
            "domains": self.domains,
            "fabric": self.fabric_dict(),
            "bom": [line.to_dict() for line in self.bom],
            "racks": self.racks,
            "power_kw": {"it": self.it_power_kw, "facility": self.facility_power_kw},
            "capex_usd": self.capex_usd,
            "tco_usd": self.tco_usd,
            **({"inventory": [u.to_dict() for u in self.inventory]} if self.inventory else {}),
        }


def _get(catalog: Catalog, kind: str, item_id: str) -> Any:
    items = catalog.by_id(kind)
    if item_id not in items:
        raise CatalogCannotBuild(f"unknown {kind[:-1]} {item_id!r} (catalog has: {sorted(items)})")
    return items[item_id]


def breakout_of(switch: Switch, nic: Nic) -> int:
    """The port split b at which the switch serves the NIC (1 = native ports); see fabrics.breakout."""
    mode = port_mode(switch, nic.speed_gbps)
    if mode is None:
        raise CatalogCannotBuild(f"switch {switch.id} ({switch.port_speed_gbps:g}G ports, splits {switch.breakout or 'none'}) "
                                 f"cannot serve the {nic.speed_gbps:g}G NIC {nic.id}")
    return mode.breakout


def fabric_spec(platform: Platform, nic: Nic, switch: Switch, rails_per_node: int, oversubscription: float,
                above_pod_oversubscription: float = 1.0) -> FabricSpec:
    """What the fabric families size with: the switch's radix at the NIC's speed (after breakout)."""
    return FabricSpec(radix=switch.radix * breakout_of(switch, nic), rails_per_node=rails_per_node,
                      oversubscription=oversubscription, above_pod_oversubscription=above_pod_oversubscription,
                      nodes_per_domain=platform.nodes_per_domain)


def check_combination(platform: Platform, nic: Nic, switch: Switch, rails_per_node: int) -> None:
    """Raise CatalogCannotBuild when the NIC, rail count or switch cannot go with the platform."""
    if nic.id not in platform.compatible_nics:
        raise CatalogCannotBuild(f"NIC {nic.id} is not compatible with {platform.id} (allowed: {platform.compatible_nics})")
    if rails_per_node not in platform.rails_per_node_options:
        raise CatalogCannotBuild(
            f"{platform.id} takes {platform.rails_per_node_options} scale-out NICs per node, not {rails_per_node}"
        )
    if nic.fabric != switch.fabric:
        raise CatalogCannotBuild(f"NIC {nic.id} is {nic.fabric} but switch {switch.id} is {switch.fabric}")
    breakout_of(switch, nic)


def sized_quantities(parts: Parts, units: int, spare_units: int, fabric: FabricSize,
                     cabled_nodes: int | None = None) -> Quantities:
    """Closed-form quantities of one design: whole modules per tier end, whole racks."""
    nodes = (units + spare_units) * nodes_per_unit(parts.platform)
    links = {tier: n for tier, n in fabric.links.items() if n > 0}
    modules = {}
    for tier, n in links.items():
        lp = link_parts(n, parts.links[tier])
        modules[tier, "switch"], modules[tier, "far"] = lp.switch_end_modules, lp.far_end_modules
    compute_rack = parts.compute_rack
    rack_for_count = compute_rack if compute_rack is not None else parts.network_rack
    return Quantities(
        units=units, spare_units=spare_units, nodes=nodes, switches=dict(fabric.switches), links=links,
        modules=modules, compute_racks=compute_racks(parts.platform, rack_for_count, units + spare_units),
        network_racks=network_racks(parts.switch, parts.network_rack, fabric.total_switches), cabled_nodes=cabled_nodes,
    )


def design_cost(
    scenario: Scenario,
    catalog: Catalog,
    platform_id: str,
    nic_id: str,
    rails_per_node: int,
    switch_id: str,
    oversubscription: float,
    domains: int,
    tiers: int | None = None,
    fabric_family: str = "fat-tree",
    above_pod_oversubscription: float = 1.0,
    gpus_per_domain_used: int | None = None,
) -> CostedDesign | None:
    """Size, bill and cost `domains` whole NVLink domains of a platform on one fabric family.

    nodes = (units + spares) · nodes_per_unit; the fabric is the job's, the spares packed into its free ports
    (fabrics/spares.py); facility kW = IT kW · PUE; TCO as in `tco_usd`. None when the fabric does not fit in
    3 tiers (or the forced `tiers`); CatalogCannotBuild on
    input the catalog cannot build.
    """
    if domains < 1:
        raise ValueError(f"domains must be ≥ 1, got {domains}")
    platform = _get(catalog, "platforms", platform_id)
    nic = _get(catalog, "nics", nic_id)
    switch = _get(catalog, "switches", switch_id)
    check_combination(platform, nic, switch, rails_per_node)

    units = compute_units(platform, domains)
    from ..failures import spare_rule  # lazy, as in spare_units_for

    rule = spare_rule(scenario, catalog)
    spares = spare_units_for(platform, domains, rule, gpus_per_domain_used)
    nodes = (units + spares) * nodes_per_unit(platform)
    spec = fabric_spec(platform, nic, switch, rails_per_node, oversubscription, above_pod_oversubscription)
    npu = nodes_per_unit(platform)
    fabric, cabled = pack_spares(fabric_family, spec, units * npu, spares, npu, tiers)
    if fabric is None:
        return None
    parts = parts_for(catalog, platform, nic, switch, rails_per_node, tuple(scenario.extra_costs), scenario.capex_scope,
                      fabric_family)
    missing = [t for t, n in fabric.links.items() if n > 0 and t not in parts.links]
    if missing:  # re-raise the reason the tier's link option is missing
        link_for(catalog, switch, fabric.vocabulary.catalog_link(missing[0]), breakout_of(switch, nic))
    q = sized_quantities(parts, units, spares, fabric, (units + cabled) * npu)
    owned = scenario.owned_counts()
    table = bom_lines(parts, q)
    stock = stock_of(table, owned)
    bom = priced_lines(parts, table, stock, scenario.constraints.contingency_fraction)
    pue, usd_per_kwh = pue_and_usd_per_kwh(scenario, facility_of(catalog))
    it_kw = it_power_kw(bom)
    capex = capex_usd(bom)
    return CostedDesign(
        platform=platform.id, nic=nic.id, switch=switch.id, rails_per_node=rails_per_node,
        units=units, spare_units=spares, nodes=nodes, domains=domains,
        gpus=nodes * platform.gpus_per_node, fabric=fabric,
        racks_compute=q.compute_racks, racks_network=q.network_racks, racks=q.compute_racks + q.network_racks,
        it_power_kw=it_kw, facility_power_kw=it_kw * pue, pue=pue, usd_per_kwh=usd_per_kwh,
        tco_years=scenario.tco.years, capex_usd=capex,
        tco_usd=tco_usd(capex, it_kw * pue, scenario.tco.years, usd_per_kwh), bom=bom,
        stock=stock, inventory=owned_use(scenario, catalog, stock), cabled_spare_units=cabled,
    )


# ----------------------------------------------------------------------------------- bounds and caps


def point_lower_bound_usd(parts: Parts, units: int, spare_units: int, nodes: int, contingency_fraction: float,
                          owned: dict[str, int] | None, energy: tuple[float, float, float] | None = None) -> float:
    """LB of one point (job units, spare units, nodes): the bill-of-materials table with every fabric and rack
    count at zero, owned parts netted; with `energy` = (PUE, years, $/kWh) also the energy of those lines (TCO).
    All prices and powers are ≥ 0 and bought = max(0, needed − owned) never falls as needed grows, so no design
    of the point costs less. Used by the ranking's bound pruning and the design space's cost bound."""
    job = units * nodes_per_unit(parts.platform)  # the SUs of the job's nodes: the fewest the cabled nodes take
    lines = bom_lines(parts, Quantities(units=units, spare_units=spare_units, nodes=nodes, cabled_nodes=job))
    cost = lines_capex_usd(lines, contingency_fraction, owned, parts.hardware_fraction)
    if energy is not None:
        pue, years, usd_per_kwh = energy
        cost += energy_usd(pue * lines_power_kw(lines), years, usd_per_kwh)
    return float(cost)


def cost_for_objective_usd(cost: CostedDesign, objective: str) -> float:
    """The cost a ranking minimises: TCO for `tco` and `rent_or_buy`, else capex (`fastest` breaks ties by it)."""
    return cost.tco_usd if objective in ("tco", "rent_or_buy") else cost.capex_usd


CAPS = (("max_gpus", "gpus", "{:,.0f} GPUs"), ("budget_usd", "capex_usd", "${:,.0f}"),
        ("facility_power_kw", "facility_power_kw", "{:,.1f} kW"), ("max_racks", "racks", "{:,.0f} racks"))


def caps_exceeded(cost: CostedDesign, constraints) -> list[tuple[str, float, float, str]]:
    """(cap name, value, cap, format) of each cap of the scenario (budget, GPUs, power, racks) the sized design
    exceeds (beyond a 1e-9 relative tolerance); empty when it is within every cap."""
    out = []
    for name, attr, fmt in CAPS:
        cap, value = getattr(constraints, name), getattr(cost, attr)
        if cap is not None and value > cap * (1 + 1e-9):
            out.append((name, value, cap, fmt))
    return out
