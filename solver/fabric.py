"""Fabric, bill of materials, power and cost (SPEC §5 and §6).

Pure functions, no I/O. `evaluate` calls `design_cost`; the optimisation model states the same
rules as linear constraints and takes its constants from the small helpers here (`split_ports`,
`divisors`, `max_nodes`, `units_per_rack`, `link_for`, `total_nodes`, ...), so there is one implementation
of each rule.

The scale-out fabric is a rail-optimised fat tree: each of the `rails` NICs of a node goes to its
own leaf group, leaves go to spines, and (3 tiers) spines go to cores. Notation: k = switch radix,
o = oversubscription (leaf down:up), E = nodes · rails endpoints.

Failure modes: a size that no fat tree of ≤ 3 tiers (or the forced tier count) can hold is a normal
outcome of a search, so `size_fabric` and `design_cost` return None. Inconsistent input (unknown
id, NIC not compatible with the platform, no link option that reaches, a unit that does not fit in
a rack) raises ValueError naming the problem.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional

from .schema import TIERS, Catalog, Facility, Link, Nic, Platform, Rack, Scenario, Switch

HOURS_PER_YEAR = 8_760.0


# ----------------------------------------------------------------------------------- integers


def _tolerance(x: float) -> float:
    # Float noise grows with magnitude: 0.1 · 30 = 3.0000000000000004 must still ceil to 3.
    return 1e-9 * max(1.0, abs(x))


def ceil_int(x: float) -> int:
    """⌈x⌉, ignoring float noise just above an integer."""
    return math.ceil(x - _tolerance(x))


def floor_int(x: float) -> int:
    """⌊x⌋, ignoring float noise just below an integer."""
    return math.floor(x + _tolerance(x))


def divisors(n: int) -> list[int]:
    """All positive divisors of n, ascending (uniform striping needs a divisor). [] for n < 1."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0] if n >= 1 else []
    return sorted(set(small + [n // d for d in small]))


def smallest_divisor_at_least(n: int, minimum: int) -> Optional[int]:
    """min{d : d divides n, d ≥ minimum}; None when minimum > n."""
    return next((d for d in divisors(n) if d >= minimum), None)


# ----------------------------------------------------------------------------------- fabric


def split_ports(radix: int, oversubscription: float) -> tuple[int, int]:
    """Leaf ports (k_down, k_up) for down:up ratio o.

    o = 1: k_down = k_up = ⌊k/2⌋.
    o > 1: k_up = 2·⌊k / (2·(1+o))⌋ (even, so striping has divisors),
           k_down = min(k − k_up, ⌊o·k_up⌋).
    k_up = 0 (o too large for k) means no multi-tier fabric can be built.
    """
    if oversubscription < 1:
        raise ValueError(f"oversubscription must be ≥ 1 (down:up), got {oversubscription}")
    if abs(oversubscription - 1.0) <= _tolerance(1.0):
        return radix // 2, radix // 2
    k_up = 2 * floor_int(radix / (2.0 * (1.0 + oversubscription)))
    k_down = min(radix - k_up, floor_int(oversubscription * k_up))
    return k_down, k_up


@dataclass(frozen=True)
class FabricSize:
    """Switch and link counts of one rail-optimised fat tree.

    For 1 tier k_down = k, k_up = 0 and oversubscription = 1 (no uplinks). pods is 0 unless 3 tiers.
    links = {node_leaf, leaf_spine, spine_core}; endpoints = nodes · rails.
    """

    tiers: int
    k: int
    k_down: int
    k_up: int
    oversubscription: float
    leaf_switches: int
    spine_switches: int
    core_switches: int
    pods: int
    links: dict
    endpoints: int

    @property
    def switches(self) -> int:
        return self.leaf_switches + self.spine_switches + self.core_switches


def leaves_for(nodes: int, rails: int, k_down: int) -> int:
    """leaves = rails · ⌈nodes / k_down⌉ (one leaf group per rail)."""
    return rails * math.ceil(nodes / k_down)


def one_tier_switches(nodes: int, rails: int, radix: int) -> Optional[int]:
    """1 tier: q = min(rails, ⌊k/nodes⌋) whole rail groups per switch; switches = ⌈rails/q⌉.

    None when nodes > k.
    """
    if nodes > radix:
        return None
    per_switch = min(rails, radix // nodes)
    return math.ceil(rails / per_switch)


def spines_for(leaves: int, radix: int, k_up: int) -> Optional[int]:
    """2 tiers: spines = smallest divisor of k_up that is ≥ ⌈leaves·k_up / k⌉.

    Every leaf then sends k_up/spines links to every spine. None when no divisor is big enough
    (i.e. leaves > k).
    """
    return smallest_divisor_at_least(k_up, math.ceil(leaves * k_up / radix))


def cores_per_plane(pods: int, radix: int) -> Optional[int]:
    """3 tiers: C = smallest divisor of k/2 that is ≥ ⌈pods/2⌉ (None when pods > k).

    Spine j of every pod connects to the C cores of plane j with (k/2)/C links each, so a core
    takes pods·(k/2)/C ≤ k links.
    """
    return smallest_divisor_at_least(radix // 2, math.ceil(pods / 2))


def max_nodes(radix: int, rails: int, oversubscription: float, tiers: int) -> int:
    """Largest node count that fits in `tiers` tiers (0 when none).

    1 tier: k.  2 tiers: ⌊k/rails⌋·k_down (leaves ≤ k).  3 tiers: ⌊k·⌊k/2⌋ / rails⌋·k_down
    (pods ≤ k, each with ⌊k/2⌋ leaves). With rails = 1 and o = 1 these are the fat-tree
    capacities k²/2 and k³/4.
    """
    if tiers == 1:
        return radix
    k_down, k_up = split_ports(radix, oversubscription)
    if k_up < 1 or k_down < 1:
        return 0
    leaf_slots = radix if tiers == 2 else radix * (radix // 2)
    return (leaf_slots // rails) * k_down


def _size_one_tier(nodes: int, rails: int, radix: int, oversubscription: float) -> Optional[FabricSize]:
    switches = one_tier_switches(nodes, rails, radix)
    if switches is None:
        return None
    links = {"node_leaf": nodes * rails, "leaf_spine": 0, "spine_core": 0}
    return FabricSize(1, radix, radix, 0, 1.0, switches, 0, 0, 0, links, nodes * rails)


def _size_two_tier(nodes: int, rails: int, radix: int, oversubscription: float) -> Optional[FabricSize]:
    k_down, k_up = split_ports(radix, oversubscription)
    if k_up < 1 or k_down < 1:
        return None
    leaves = leaves_for(nodes, rails, k_down)
    spines = spines_for(leaves, radix, k_up)
    if spines is None:
        return None
    links = {"node_leaf": nodes * rails, "leaf_spine": leaves * k_up, "spine_core": 0}
    return FabricSize(2, radix, k_down, k_up, float(oversubscription), leaves, spines, 0, 0, links, nodes * rails)


def _size_three_tier(nodes: int, rails: int, radix: int, oversubscription: float) -> Optional[FabricSize]:
    k_down, k_up = split_ports(radix, oversubscription)
    half = radix // 2
    if k_up < 1 or k_down < 1 or half < 1:
        return None
    leaves = leaves_for(nodes, rails, k_down)
    pods = math.ceil(leaves / half)
    planes_cores = cores_per_plane(pods, radix)
    if pods > radix or planes_cores is None:
        return None
    spines = pods * k_up
    cores = k_up * planes_cores
    links = {"node_leaf": nodes * rails, "leaf_spine": leaves * k_up, "spine_core": spines * half}
    return FabricSize(3, radix, k_down, k_up, float(oversubscription), leaves, spines, cores, pods, links, nodes * rails)


_SIZERS = {1: _size_one_tier, 2: _size_two_tier, 3: _size_three_tier}


def size_fabric(
    nodes: int, rails: int, radix: int, oversubscription: float, tiers: Optional[int] = None
) -> Optional[FabricSize]:
    """Fewest-tier rail-optimised fat tree for `nodes` × `rails` endpoints on radix-k switches.

    `tiers` forces a tier count. None when it does not fit in 3 tiers (or in the forced count).
    """
    if nodes < 1 or rails < 1 or radix < 2:
        raise ValueError(f"need nodes ≥ 1, rails ≥ 1, radix ≥ 2; got {nodes}, {rails}, {radix}")
    if tiers not in (None, 1, 2, 3):
        raise ValueError(f"tiers must be 1, 2, 3 or None, got {tiers}")
    for count in [tiers] if tiers else [1, 2, 3]:
        size = _SIZERS[count](nodes, rails, radix, oversubscription)
        if size is not None:
            return size
    return None


# ----------------------------------------------------------------------------------- links


def default_facility() -> Facility:
    """The schema's facility defaults, for a catalog without a facility block."""
    return Facility(source="schema defaults (catalog has no facility)")


def facility_of(catalog: Catalog) -> Facility:
    return catalog.facility if catalog.facility is not None else default_facility()


def choose_link(catalog: Catalog, generation: str, tier: str, distance_m: float) -> Link:
    """Cheapest link option (usd_per_link, then w_per_link, then id) of this generation and tier
    whose max_reach_m ≥ distance_m."""
    if tier not in TIERS:
        raise ValueError(f"tier must be one of {TIERS}, got {tier!r}")
    options = [x for x in catalog.links if x.generation == generation and x.tier == tier]
    reaching = [x for x in options if x.max_reach_m >= distance_m]
    if not reaching:
        have = ", ".join(f"{x.id} ({x.max_reach_m:g} m)" for x in options) or "none"
        raise ValueError(
            f"no {generation} link for tier {tier} reaches {distance_m:g} m; catalog options: {have}"
        )
    return min(reaching, key=lambda x: (x.usd_per_link, x.w_per_link, x.id))


def link_for(catalog: Catalog, switch: Switch, tier: str) -> Link:
    """The link option used for `tier` with this switch, at the facility's link distance."""
    distance_m = getattr(facility_of(catalog).link_distance_m, tier)
    return choose_link(catalog, switch.generation, tier, distance_m)


@dataclass(frozen=True)
class LinkParts:
    """Cables and modules of one tier: cables = links, modules = ⌈links / links_per_module⌉."""

    cables: int
    switch_end_modules: int
    far_end_modules: int


def link_parts(links: int, link: Link) -> LinkParts:
    """cables = links; modules per end = ⌈links / links_per_module⌉ (a twin-port module serves two)."""
    return LinkParts(
        cables=links,
        switch_end_modules=math.ceil(links / link.switch_end_links_per_module),
        far_end_modules=math.ceil(links / link.far_end_links_per_module),
    )


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
        raise ValueError(
            f"platform {platform.id} ({platform.unit_power_kw:g} kW, {platform.unit_ru:g} RU) does not fit"
            f" in rack {rack.id} ({rack.usable_kw:g} kW, {rack.usable_ru} RU)"
        )
    return math.ceil(units / per_rack)


def network_racks(switch: Switch, rack: Rack, switches: int) -> int:
    """racks = ⌈max(switches·ru / usable_ru, switches·power_w/1000 / usable_kw)⌉.

    Switches only (their optics are not counted against the rack's kW); RU is pooled across racks,
    so a switch is not forced to sit whole in one rack.
    """
    by_space = switches * switch.ru / rack.usable_ru
    by_power = switches * switch.power_w / 1000.0 / rack.usable_kw
    return ceil_int(max(by_space, by_power))


# ----------------------------------------------------------------------------------- BOM


@dataclass(frozen=True)
class BomLine:
    """One bill-of-materials line; extended_usd = quantity · unit_price_usd; power_w is per unit."""

    category: str  # compute | spares | nic | switch | link | rack | contingency
    part: str
    description: str
    quantity: int
    unit_price_usd: float
    extended_usd: float
    power_w: float
    price_source: str
    price_date: str
    price_is_estimate: bool

    def to_dict(self) -> dict:
        return asdict(self)


def _line(category: str, part: str, description: str, quantity: int, unit_price_usd: float,
          power_w: float, priced) -> BomLine:
    return BomLine(category, part, description, quantity, unit_price_usd, quantity * unit_price_usd,
                   power_w, priced.price_source, priced.price_date, priced.price_is_estimate)


def compute_units(platform: Platform, domains: int) -> int:
    """Units bought for whole domains: unit = node → domains·nodes_per_domain; unit = domain → domains."""
    return domains * platform.nodes_per_domain if platform.unit == "node" else domains


def nodes_per_unit(platform: Platform) -> int:
    return 1 if platform.unit == "node" else platform.nodes_per_domain


def spare_units_for(units: int, spare_nodes_fraction: float) -> int:
    """spares = ⌈fraction · units⌉ whole compute units."""
    return ceil_int(spare_nodes_fraction * units)


def total_nodes(platform: Platform, domains: int, spare_nodes_fraction: float) -> int:
    """Nodes bought and cabled for `domains` job domains: (units + spares) · nodes_per_unit."""
    units = compute_units(platform, domains)
    return (units + spare_units_for(units, spare_nodes_fraction)) * nodes_per_unit(platform)


def _compute_lines(platform: Platform, units: int, spare_units: int) -> list[BomLine]:
    unit_w = platform.unit_power_kw * 1000.0
    what = f"{platform.name} (per {platform.unit})"
    return [
        _line("compute", platform.id, what, units, platform.unit_price_usd, unit_w, platform),
        _line("spares", platform.id, f"spare {what}", spare_units, platform.unit_price_usd, unit_w, platform),
    ]


def _nic_lines(platform: Platform, nic: Nic, nodes: int, rails: int) -> list[BomLine]:
    if platform.includes_scaleout_nics:
        return []
    what = f"{nic.name}, {rails} per node"
    return [_line("nic", nic.id, what, nodes * rails, nic.unit_price_usd, nic.power_w, nic)]


def _switch_lines(switch: Switch, fabric: FabricSize) -> list[BomLine]:
    roles = (("leaf", fabric.leaf_switches), ("spine", fabric.spine_switches), ("core", fabric.core_switches))
    return [
        _line("switch", switch.id, f"{role} switch: {switch.name}", count, switch.unit_price_usd,
              switch.power_w, switch)
        for role, count in roles
    ]


def _link_lines(catalog: Catalog, switch: Switch, fabric: FabricSize) -> list[BomLine]:
    lines = []
    for tier in TIERS:
        links = fabric.links[tier]
        if links == 0:
            continue
        link = link_for(catalog, switch, tier)
        parts = link_parts(links, link)
        lines += [
            _line("link", link.id, f"{tier} cable: {link.description}", parts.cables, link.cable_usd, 0.0, link),
            _line("link", link.id, f"{tier} switch-end module ({link.switch_end_links_per_module} link/module)",
                  parts.switch_end_modules, link.switch_end_module_usd, link.switch_end_module_w, link),
            _line("link", link.id, f"{tier} far-end module ({link.far_end_links_per_module} link/module)",
                  parts.far_end_modules, link.far_end_module_usd, link.far_end_module_w, link),
        ]
    return lines


def rack_of(catalog: Catalog, rack_id: str) -> Rack:
    racks = catalog.by_id("racks")
    if rack_id not in racks:
        raise ValueError(f"facility names rack {rack_id!r}, which the catalog lacks (has: {sorted(racks)})")
    return racks[rack_id]


def _rack_lines(catalog: Catalog, platform: Platform, switch: Switch, units: int, switches: int) -> list[BomLine]:
    facility = facility_of(catalog)
    compute_rack = rack_of(catalog, facility.compute_rack)
    network_rack = rack_of(catalog, facility.network_rack)
    compute_count = compute_racks(platform, compute_rack, units)
    # A unit that is a rack (NVL72) ships in its own rack: counted in `racks`, not bought again.
    bought = 0 if platform.unit_is_rack else compute_count
    return [
        _line("rack", compute_rack.id, f"compute rack: {compute_rack.name}", bought,
              compute_rack.unit_price_usd, 0.0, compute_rack),
        _line("rack", network_rack.id, f"network rack: {network_rack.name}",
              network_racks(switch, network_rack, switches), network_rack.unit_price_usd, 0.0, network_rack),
    ]


def _kept(line: BomLine) -> bool:
    # Drop empty lines; keep a free part that still draws power so power stays a sum of lines.
    return line.quantity > 0 and (line.unit_price_usd > 0 or line.power_w > 0)


def contingency_line(lines: list[BomLine], contingency_fraction: float) -> BomLine:
    """contingency = fraction · Σ extended_usd of the other lines (one line, quantity 1)."""
    amount = contingency_fraction * sum(line.extended_usd for line in lines)
    return BomLine("contingency", "contingency", f"contingency {contingency_fraction:.1%} of the lines above",
                   1, amount, amount, 0.0, "scenario constraints.contingency_fraction", "", True)


def bill_of_materials(
    catalog: Catalog,
    platform: Platform,
    nic: Nic,
    switch: Switch,
    rails_per_node: int,
    units: int,
    spare_units: int,
    fabric: FabricSize,
    contingency_fraction: float = 0.0,
) -> list[BomLine]:
    """BOM lines: compute, spares, NICs, leaf/spine/core switches, per tier cable + both module ends,
    compute and network racks, contingency. Nodes = (units + spare_units) · nodes_per_unit."""
    nodes = (units + spare_units) * nodes_per_unit(platform)
    lines = (
        _compute_lines(platform, units, spare_units)
        + _nic_lines(platform, nic, nodes, rails_per_node)
        + _switch_lines(switch, fabric)
        + _link_lines(catalog, switch, fabric)
        + _rack_lines(catalog, platform, switch, units + spare_units, fabric.switches)
    )
    lines = [line for line in lines if _kept(line)]
    if contingency_fraction > 0:
        lines.append(contingency_line(lines, contingency_fraction))
    return lines


def capex_usd(bom: list[BomLine]) -> float:
    """capex = Σ extended_usd."""
    return sum(line.extended_usd for line in bom)


def it_power_kw(bom: list[BomLine]) -> float:
    """IT power = Σ quantity · power_w / 1000 (compute units, NICs, switches, link modules)."""
    return sum(line.quantity * line.power_w for line in bom) / 1000.0


def tco_usd(capex: float, facility_power_kw: float, years: float, usd_per_kwh: float) -> float:
    """TCO = capex + years · 8,760 h · facility kW · $/kWh."""
    return capex + years * HOURS_PER_YEAR * facility_power_kw * usd_per_kwh


def pue_and_usd_per_kwh(scenario: Scenario, facility: Facility) -> tuple[float, float]:
    """scenario.tco.pue / usd_per_kwh override the facility's."""
    pue = scenario.tco.pue if scenario.tco.pue is not None else facility.pue
    price = scenario.tco.usd_per_kwh if scenario.tco.usd_per_kwh is not None else facility.usd_per_kwh
    return pue, price


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

    @property
    def job_nodes(self) -> int:
        """Nodes that run the job (spares excluded)."""
        return self.nodes * self.units // (self.units + self.spare_units)

    def to_dict(self) -> dict:
        """The SPEC §8.3 design keys this module owns."""
        f = self.fabric
        return {
            "platform": self.platform,
            "gpus": self.gpus,
            "nodes": self.nodes,
            "domains": self.domains,
            "fabric": {
                "nic": self.nic,
                "rails_per_node": self.rails_per_node,
                "switch": self.switch,
                "tiers": f.tiers,
                "oversubscription": f.oversubscription,
                "leaf_switches": f.leaf_switches,
                "spine_switches": f.spine_switches,
                "core_switches": f.core_switches,
                "links": dict(f.links),
            },
            "bom": [line.to_dict() for line in self.bom],
            "racks": self.racks,
            "power_kw": {"it": self.it_power_kw, "facility": self.facility_power_kw},
            "capex_usd": self.capex_usd,
            "tco_usd": self.tco_usd,
        }


def _get(catalog: Catalog, kind: str, item_id: str):
    items = catalog.by_id(kind)
    if item_id not in items:
        raise ValueError(f"unknown {kind[:-1]} {item_id!r} (catalog has: {sorted(items)})")
    return items[item_id]


def check_combination(platform: Platform, nic: Nic, switch: Switch, rails_per_node: int) -> None:
    """Raise ValueError when the NIC, rail count or switch cannot go with the platform."""
    if nic.id not in platform.compatible_nics:
        raise ValueError(f"NIC {nic.id} is not compatible with {platform.id} (allowed: {platform.compatible_nics})")
    if rails_per_node not in platform.scaleout_nics_per_node:
        raise ValueError(
            f"{platform.id} takes {platform.scaleout_nics_per_node} scale-out NICs per node, not {rails_per_node}"
        )
    if nic.fabric != switch.fabric:
        raise ValueError(f"NIC {nic.id} is {nic.fabric} but switch {switch.id} is {switch.fabric}")


def design_cost(
    scenario: Scenario,
    catalog: Catalog,
    platform_id: str,
    nic_id: str,
    rails_per_node: int,
    switch_id: str,
    oversubscription: float,
    domains: int,
    tiers: Optional[int] = None,
) -> Optional[CostedDesign]:
    """Size, bill and cost `domains` whole NVLink domains of a platform on one fabric.

    nodes = (units + spares) · nodes_per_unit; facility kW = IT kW · PUE; TCO as in `tco_usd`.
    None when the fabric does not fit in 3 tiers (or the forced `tiers`); ValueError on bad input.
    """
    if domains < 1:
        raise ValueError(f"domains must be ≥ 1, got {domains}")
    platform = _get(catalog, "platforms", platform_id)
    nic = _get(catalog, "nics", nic_id)
    switch = _get(catalog, "switches", switch_id)
    check_combination(platform, nic, switch, rails_per_node)

    units = compute_units(platform, domains)
    spare_units = spare_units_for(units, scenario.constraints.spare_nodes_fraction)
    nodes = total_nodes(platform, domains, scenario.constraints.spare_nodes_fraction)
    fabric = size_fabric(nodes, rails_per_node, switch.radix, oversubscription, tiers)
    if fabric is None:
        return None

    bom = bill_of_materials(catalog, platform, nic, switch, rails_per_node, units, spare_units, fabric,
                            scenario.constraints.contingency_fraction)
    facility = facility_of(catalog)
    racks_compute = compute_racks(platform, rack_of(catalog, facility.compute_rack), units + spare_units)
    racks_network = network_racks(switch, rack_of(catalog, facility.network_rack), fabric.switches)
    pue, usd_per_kwh = pue_and_usd_per_kwh(scenario, facility)
    it_kw = it_power_kw(bom)
    capex = capex_usd(bom)
    return CostedDesign(
        platform=platform.id, nic=nic.id, switch=switch.id, rails_per_node=rails_per_node,
        units=units, spare_units=spare_units, nodes=nodes, domains=domains,
        gpus=nodes * platform.gpus_per_node, fabric=fabric,
        racks_compute=racks_compute, racks_network=racks_network, racks=racks_compute + racks_network,
        it_power_kw=it_kw, facility_power_kw=it_kw * pue, pue=pue, usd_per_kwh=usd_per_kwh,
        tco_years=scenario.tco.years, capex_usd=capex,
        tco_usd=tco_usd(capex, it_kw * pue, scenario.tco.years, usd_per_kwh), bom=bom,
    )
