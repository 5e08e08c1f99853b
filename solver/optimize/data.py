"""The constants of the optimisation model, collected once from the design space and the catalog.

Indices (docs/model.md): a architecture, s a layout shape of a's performance class, j the j-th
allowed data-parallel degree D_sj of shape s, t ∈ {1, 2, 3} fabric tiers. A *point* (s, j, a) is
one buildable design: its job domains, spare units, nodes and fewest tier count.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .. import costing
from ..design_space import Architecture, DesignSpace, allowed_tiers, dominated_by_fat_tree, fabric_spec_of
from ..errors import CatalogCannotBuild, InputError, Problem
from ..fabrics import POD_TIERS, TIER_COUNTS, FabricConstants, family
from ..fabrics.links import facility_of
from ..fabrics.spares import pack_spares
from ..failures import Inputs, SpareRule, inputs_for, spare_rule
from ..failures import point_goodput as failures_point_goodput
from ..inputs.catalog import provenance
from ..inputs.schema import Scenario

MUSD = 1e-6  # model cost unit: millions of dollars (keeps HiGHS's cost range sane)


@dataclass
class ArchData:
    """Constants of one architecture: its priced parts (costing/table.py) and its fabric constants."""

    arch: Architecture
    parts: costing.Parts
    fab: FabricConstants
    tiers: list[int]  # tier counts this architecture may use
    units_per_domain: int
    nodes_per_unit: int
    gpus_per_node: int
    units_per_rack: int  # 1 and unit_is_rack for NVL72-style platforms
    unit_is_rack: bool
    max_domains: int

    @property
    def rails(self) -> int:
        return self.arch.rails_per_node


@dataclass
class ModelData:
    space: DesignSpace
    archs: list[ArchData]
    target_step_time_s: float
    objective: str
    spares: SpareRule
    contingency_fraction: float
    pue: float
    usd_per_kwh: float
    years: float
    caps: dict  # max_gpus, budget_usd, facility_power_kw, max_racks (None = no cap)
    pin_tiers: int | None = None
    pin_nodes: int | None = None
    dropped: dict = field(default_factory=dict)
    over_caps: frozenset = frozenset()  # points (i, j, a) whose lower bounds already break a cap (ranking)
    owned: dict = field(default_factory=dict)  # catalog id → count owned (scenario inventory)
    costed: dict = field(default_factory=dict)  # (architecture, domains, G_u) → CostedDesign | None (dominance)
    goodput: Inputs | None = None  # failure data when the step-time target applies to step ÷ goodput


def arch_data(space: DesignSpace, a: Architecture, max_domains: int) -> ArchData:
    """The constants of one architecture; CatalogCannotBuild when it cannot be built at all."""
    cat = space.catalog
    plat = cat.by_id("platforms")[a.platform]
    nic = cat.by_id("nics")[a.nic]
    sw = cat.by_id("switches")[a.switch]
    parts = costing.parts_for(cat, plat, nic, sw, a.rails_per_node, tuple(space.scenario.extra_costs),
                              space.scenario.capex_scope, a.fabric)
    rack = costing.rack_of(cat, facility_of(cat).compute_rack)
    upr = costing.units_per_rack(plat, rack)
    if upr < 1:
        raise CatalogCannotBuild(f"{plat.id} ({plat.unit_power_kw:g} kW, {plat.unit_ru:g} RU) does not fit in rack {rack.id}")
    fam = family(a.fabric)
    fab = fam.constants(fabric_spec_of(cat, a))
    links = fam.vocabulary.link_names  # t tiers take the family's first t links (the first is always in parts)
    buildable = {t: all(name in parts.links for name in links[:t]) and (t == 1 or fab.k_up >= 1) for t in TIER_COUNTS}
    tiers = [t for t in allowed_tiers(a, space.architectures, space.scenario) if buildable[t] and fab.cap[t] > 0]
    return ArchData(arch=a, parts=parts, fab=fab, tiers=tiers, units_per_domain=costing.compute_units(plat, 1),
                    nodes_per_unit=costing.nodes_per_unit(plat), gpus_per_node=plat.gpus_per_node,
                    units_per_rack=upr, unit_is_rack=plat.unit_is_rack, max_domains=max_domains)


def model_data(space: DesignSpace) -> ModelData:
    """Collect the constants of every architecture from the catalog through costing and the fabric
    families; an architecture the catalog cannot build is dropped with its reason."""
    sc = space.scenario
    pue, usd_per_kwh = costing.pue_and_usd_per_kwh(sc, facility_of(space.catalog))
    max_dom: dict = {}
    for s in space.shapes:
        for p in s.perfs:
            max_dom[p] = max(max_dom.get(p, 0), max(s.domains))
    archs, dropped = [], {}
    for a in space.architectures:
        try:
            archs.append(arch_data(space, a, max_dom.get(a.perf, 0)))
        except CatalogCannotBuild as exc:
            dropped[a.label()] = str(exc)
    con = sc.constraints
    return ModelData(
        space=space, archs=archs, target_step_time_s=finite_target_s(space), objective="tco" if sc.objective == "rent_or_buy" else sc.objective,  # rent_or_buy: the TCO designs

        spares=spare_rule(sc, space.catalog), contingency_fraction=con.contingency_fraction,
        pue=pue, usd_per_kwh=usd_per_kwh, years=sc.tco.years,
        caps={"max_gpus": con.max_gpus, "budget_usd": con.budget_usd, "facility_power_kw": con.facility_power_kw,
              "max_racks": con.max_racks},
        pin_tiers=sc.pin.tiers, pin_nodes=sc.pin.nodes, dropped=dropped, owned=sc.owned_counts(), costed=space.costed,
        goodput=_in_target(inputs_for(sc, space.catalog)),
    )


def with_pod_tiers(sc: Scenario) -> Scenario:
    """The scenario as every optimisation over it reads it: a pinned oversubscribed tier above the pods without a
    pinned tier count pins 3 tiers (only a 3-tier fabric has a tier above the pods; a fully pinned evaluate
    builds one too). `solve`, the next faster design and the frontier all solve this scenario."""
    if sc.pin.above_pod_oversubscription not in (None, 1) and sc.pin.tiers is None:
        return sc.model_copy(update={"pin": sc.pin.model_copy(update={"tiers": POD_TIERS})})
    return sc


def _in_target(inputs: Inputs | None) -> Inputs | None:
    return inputs if inputs is not None and inputs.in_target else None


def finite_target_s(space: DesignSpace) -> float:
    """The target the step_time rows use: the scenario's, or (`fastest` without a target) one above
    every point's step time, so the rows hold at every point and bind nowhere."""
    if math.isfinite(space.target_step_time_s):
        return space.target_step_time_s
    slowest = max((t for s in space.shapes for t in s.step_time_s), default=1.0)
    return 2.0 * slowest + 1.0


def points(data: ModelData) -> dict:
    """Every (shape i, d index j, architecture a) that can be built: its job domains, spare units,
    nodes (spares included), tier count — the fewest tiers that hold the job's nodes (the pinned count
    when `pin.tiers`), which must be a tier count the architecture allows (`ArchData.tiers`) — and the
    nodes cabled to its fabric (the job's and the spares packed into its free ports, fabrics/spares.py)."""
    plats = data.space.catalog.by_id("platforms")
    by_perf: dict = {}
    for a, ad in enumerate(data.archs):
        by_perf.setdefault(ad.arch.perf, []).append(a)
    out = {}
    dominated: dict[tuple, bool] = {}  # (a, domains, G_u) → dominated_by_fat_tree: shapes share their domain counts
    specs: dict = {}  # a → its FabricSpec

    def is_dominated(a: int, dom: int, g_used: int) -> bool:
        key = (a, dom, g_used)
        if key not in dominated:
            dominated[key] = dominated_by_fat_tree(data.space.scenario, data.space.catalog, data.archs[a].arch, dom,
                                                   data.space.architectures, data.costed, g_used)
        return dominated[key]

    for i, s in enumerate(data.space.shapes):
        plat = plats[s.perf.platform]
        for j, dom in enumerate(s.domains):
            units = costing.compute_units(plat, dom)
            spares = costing.spare_units_for(plat, dom, data.spares, s.gpus_per_domain_used)
            npu = costing.nodes_per_unit(plat)
            nodes, job = (units + spares) * npu, units * npu
            for a in [b for p in s.perfs for b in by_perf.get(p, [])]:
                if (i, j, a) in data.over_caps:
                    continue
                ad = data.archs[a]
                fits = [t for t in TIER_COUNTS if job <= ad.fab.cap[t]]
                tiers = data.pin_tiers if data.pin_tiers is not None else (fits[0] if fits else None)
                # the dominance is judged on the point's own spares (G_u decides the in-domain ones), as the
                # design space's offer thresholds and the enumeration (optimize/oracle.py) judge it
                if tiers in ad.tiers and tiers in fits and not is_dominated(a, dom, s.gpus_per_domain_used):
                    if a not in specs:
                        specs[a] = fabric_spec_of(data.space.catalog, ad.arch)
                    _, cabled = pack_spares(ad.arch.fabric, specs[a], job, spares, npu, tiers)
                    out[(i, j, a)] = (dom, spares, nodes, tiers, job + cabled * npu)
    return out


def point_goodput(data: ModelData, i: int, j: int, a: int, nodes: int, tiers: int) -> float:
    """g[s,j,a]: the goodput the step-time rows scale the target by (1 when the target does not use it):
    the architecture's fabric sized for the point's job nodes on its tier count (`failures.point_goodput`)."""
    if data.goodput is None:
        return 1.0
    s, ad = data.space.shapes[i], data.archs[a]
    gpus = s.layout(s.d_values[j]).gpus
    return failures_point_goodput(data.goodput, ad.arch.fabric, fabric_spec_of(data.space.catalog, ad.arch), gpus,
                                  ad.gpus_per_node, nodes, ad.arch.rails_per_node, tiers)


def bounds(ad: ArchData, rule: SpareRule, platform) -> dict:
    """Largest values the integer counts of one architecture can take at any feasible point (spares
    are largest when the layout fills its domains: no in-domain spares)."""
    units = ad.units_per_domain * max(1, ad.max_domains)
    spares = costing.spare_units_for(platform, max(1, ad.max_domains), rule)
    nodes = ad.nodes_per_unit * (units + spares)
    return {
        "spares": spares,
        "nodes": nodes,
        "compute_racks": units + spares if ad.unit_is_rack else -(-(units + spares) // ad.units_per_rack),
    }


def unbuildable_error(space: DesignSpace, data: ModelData) -> InputError:
    """Every allowed architecture was dropped for a catalog reason: an input error on the facility."""
    by_reason: dict = {}
    for label, why in sorted(data.dropped.items()):
        by_reason.setdefault(why, []).append(label)
    reasons = "; ".join(f"{why} ({len(labels)} architecture(s), e.g. {labels[0]})" for why, labels in by_reason.items())
    message = (f"no allowed architecture can be built from the catalog ({reasons}); check "
               "facility.link_distance_m against the links' max_reach_m, and the compute rack's usable kW and RU")
    prov = provenance(space.catalog)
    origin = prov.origin.get(("facility", "facility"))
    if origin:
        doc, loc = origin
        return InputError([doc.problem(loc, message)])
    files = prov.files or [("<catalog>", "")]
    return InputError([Problem(files[-1][0], 1, 1, "facility", message)])
