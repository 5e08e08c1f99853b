"""The allow-lists: which architectures (platform × NIC × rails × switch × oversubscription × fabric family ×
above-pod ratio) and tier counts a scenario allows, and the hardware and fabric inputs of each."""
from __future__ import annotations

from dataclasses import replace

from ..costing import fabric_spec
from ..costing.facility import allowed_rails
from ..fabrics import (
    DEFAULT_FAMILIES,
    DEFAULT_FAMILY,
    FAMILIES,
    POD_TIERS,
    FabricSpec,
    family,
    has_pod_tier,
    same_network_as,
    tier_counts,
)
from ..fabrics.breakout import serves
from ..inputs.schema import Catalog, Scenario, as_list
from ..perf.hardware import Hardware, hardware_for
from .identity import Architecture, PerfClass


def architectures(scenario: Scenario, cat: Catalog) -> list[Architecture]:
    """Every allowed platform × NIC × rails × switch × oversubscription (sorted, deterministic)."""
    con, pin = scenario.constraints, scenario.pin
    allow_plat = as_list(con.platforms)
    allow_gpu = as_list(con.gpus)
    allow_nic = as_list(con.nics)
    allow_sw = as_list(con.switches)
    allow_rails = as_list(con.rails_per_node)
    overs = [pin.oversubscription] if pin.oversubscription is not None else (as_list(con.oversubscription) or [1.0])
    families = allowed_families(scenario)
    pods = _architecture_pods(scenario)
    nics, out = cat.by_id("nics"), []
    for plat in cat.platforms:
        if (pin.platform and plat.id != pin.platform) or (allow_plat and plat.id not in allow_plat):
            continue
        if allow_gpu and plat.gpu not in allow_gpu:
            continue
        for nic_id in plat.compatible_nics:
            if (pin.nic and nic_id != pin.nic) or (allow_nic and nic_id not in allow_nic) or nic_id not in nics:
                continue
            nic = nics[nic_id]
            for rails in allowed_rails(scenario, cat, plat):  # reference NIC configurations unless opened
                if (pin.rails_per_node and rails != pin.rails_per_node) or (allow_rails and rails not in allow_rails):
                    continue
                for sw in cat.switches:
                    if (pin.switch and sw.id != pin.switch) or (allow_sw and sw.id not in allow_sw):
                        continue
                    if not switch_serves_nic(sw, nic):
                        continue
                    for over in overs:
                        spec = fabric_spec(plat, nic, sw, rails, float(over))
                        out += [Architecture(plat.id, nic_id, rails, sw.id, float(over), name, pod)
                                for name in families if not set(same_network_as(name, spec)) & set(families)
                                for pod in pods if pod == 1 or has_pod_tier(family(name))]
    return sorted(set(out))


def allowed_families(scenario: Scenario) -> list[str]:
    """pin.fabric, else constraints.fabrics, else the deployed families (DEFAULT_FAMILIES: rail-only has
    no public deployment and is built only when named, SPEC §5.2)."""
    if scenario.pin.fabric is not None:
        return [scenario.pin.fabric]
    return as_list(scenario.constraints.fabrics) or [f for f in FAMILIES if f in DEFAULT_FAMILIES]


def _architecture_pods(scenario: Scenario) -> list[float]:
    """The above-pod ratios architectures are made with: 1 (fabrics too small for the tier) and the
    allowed ones; a pin only its own ratio (3 tiers), as in a fully pinned evaluate (issue 27)."""
    if scenario.pin.above_pod_oversubscription is not None:
        return [float(scenario.pin.above_pod_oversubscription)]
    return sorted({1.0} | {float(x) for x in above_pod_ratios(scenario)})


def above_pod_ratios(scenario: Scenario) -> list[float]:
    """The allowed down:up ratios above the pods: pin, else constraints, else [1]."""
    pin = scenario.pin.above_pod_oversubscription
    if pin is not None:
        return [pin]
    return [float(x) for x in as_list(scenario.constraints.above_pod_oversubscription) or [1.0]]


def switch_serves_nic(switch, nic) -> bool:
    """A switch serves a NIC of the same fabric whose speed is its port speed, natively or after a
    breakout the catalog lists (fabrics/breakout.py)."""
    return serves(switch, nic) is not None


def allowed_tiers(arch: Architecture, all_archs, scenario: Scenario) -> tuple[int, ...]:
    """Tier counts an architecture may be built with: its family's (multi-plane ≥ 2, rail-only ≤ 2); only 3 when the
    tier above the pods is oversubscribed (a smaller fabric has no such tier: it is the
    non-blocking architecture's); not 3 for a non-blocking one when the scenario's
    above_pod_oversubscription list leaves out 1; not 1 when `one_tier_allowed` says so."""
    fam = family(arch.fabric)
    tiers = list(tier_counts(fam))
    if arch.above_pod_oversubscription != 1:
        tiers = [t for t in tiers if t == POD_TIERS]
    elif 1.0 not in above_pod_ratios(scenario):
        tiers = [t for t in tiers if t < POD_TIERS]
    if not one_tier_allowed(arch, all_archs):
        tiers = [t for t in tiers if t != 1]
    return tuple(tiers)


def fabric_spec_of(catalog: Catalog, arch: Architecture) -> FabricSpec:
    """The fabric family's sizing inputs for an architecture (radix after breakout)."""
    plat = catalog.by_id("platforms")[arch.platform]
    nic = catalog.by_id("nics")[arch.nic]
    sw = catalog.by_id("switches")[arch.switch]
    return fabric_spec(plat, nic, sw, arch.rails_per_node, arch.oversubscription, arch.above_pod_oversubscription)


def hardware_of(scenario: Scenario, catalog: Catalog, perf: PerfClass) -> Hardware:
    """`hardware_for` plus the fabric's structure: planes (multi-plane, rail-only) and the pods of
    an oversubscribed tier above them (perf/crossing.py reads both)."""
    hw = hardware_for(scenario, catalog, perf.platform, perf.nic, perf.rails_per_node, perf.oversubscription)
    if perf.fabric == DEFAULT_FAMILY and perf.above_pod_oversubscription == 1:
        return hw
    plat = catalog.by_id("platforms")[perf.platform]
    fam = family(perf.fabric)
    spec = FabricSpec(radix=0, rails_per_node=perf.rails_per_node, nodes_per_domain=plat.nodes_per_domain)  # planes: no radix
    pod_domains = 0
    if perf.above_pod_oversubscription != 1:
        arch = Architecture(perf.platform, perf.nic, perf.rails_per_node, perf.pod_switch, perf.oversubscription,
                            perf.fabric, perf.above_pod_oversubscription)
        nodes = fam.pod_nodes(fabric_spec_of(catalog, arch))
        pod_domains = nodes // plat.nodes_per_domain if nodes % plat.nodes_per_domain == 0 else 0
    return replace(hw, rail_planes=fam.planes(spec), planes_by_domain_position=fam.planes_by_domain_position,
                   above_pod_oversubscription=perf.above_pod_oversubscription, pod_domains=pod_domains)


def one_tier_allowed(arch: Architecture, all_archs) -> bool:
    """A 1-tier fabric has no uplinks, so it is the non-blocking architecture: an oversubscribed
    architecture may use 1 tier only when the non-blocking twin is not in the design space."""
    if arch.oversubscription == 1:
        return True
    twin = replace(arch, oversubscription=1.0)
    return twin not in set(all_archs)
