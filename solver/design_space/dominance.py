"""Where a multi-plane or rail-only design is dominated by the fat tree of the same parts (not offered)."""
from __future__ import annotations

from dataclasses import replace

from ..costing import design_cost
from ..errors import CatalogCannotBuild
from ..fabrics import DEFAULT_FAMILY
from ..failures import goodput_in_target, job_parts
from ..inputs.schema import Catalog, Scenario
from .allowlists import allowed_tiers
from .identity import Architecture


def dominated_by_fat_tree(scenario: Scenario, catalog: Catalog, arch: Architecture, domains: int,
                          all_archs: list[Architecture], cache: dict, gpus_per_domain_used: int | None = None) -> bool:
    """A multi-plane or rail-only design is not offered where the fat tree of the same parts (an
    architecture of the space) builds the same domains for no more capex, facility power and racks.

    With a non-blocking tier above the pods (the only case checked) the fat tree's step time is
    never longer either (it forwards nothing between planes), so it is at least as good on every
    requirement and objective: ranking the other family there would offer the fat tree's purchase,
    or a worse one, under another name (at small sizes their parts are often identical). Where the
    other family is cheaper, or the fat tree cannot build the size, it is offered. The optimisation
    model (`optimize.data.points`), the dominance pruning (`_offer_thresholds`) and the exhaustive
    enumeration apply this same rule; `cache` maps (architecture, domains, G_u) to its closed-form cost
    (G_u decides the in-domain spares). With the goodput in the target the fat tree must also be at
    least as reliable: it is (its leaves and node links are a subset of what a rail-only job depends on).
    """
    if arch.fabric == DEFAULT_FAMILY or arch.above_pod_oversubscription != 1:
        return False
    twin = replace(arch, fabric=DEFAULT_FAMILY)
    if twin not in all_archs:
        return False
    mine, plain = (cost_of(scenario, catalog, a, domains, cache, gpus_per_domain_used) for a in (arch, twin))
    if mine is None or plain is None or plain.fabric.tiers not in allowed_tiers(twin, all_archs, scenario):
        return False
    return (plain.capex_usd <= mine.capex_usd and plain.facility_power_kw <= mine.facility_power_kw
            and plain.racks <= mine.racks
            and (catalog.reliability is None or not goodput_in_target(scenario) or _no_less_reliable(plain, mine, arch)))


def _no_less_reliable(plain, mine, arch: Architecture) -> bool:
    """The fat tree's job depends on no more switches and links than the other family's (same nodes and
    GPUs: `failures.job_parts`), so its goodput is at least as high."""
    a = job_parts(DEFAULT_FAMILY, 0, 1, arch.rails_per_node, plain.fabric, plain.nodes)
    b = job_parts(arch.fabric, 0, 1, arch.rails_per_node, mine.fabric, mine.nodes)
    return bool(a["switch"] <= b["switch"] + 1e-12 and a["link"] <= b["link"] + 1e-12)


def cost_of(scenario: Scenario, catalog: Catalog, arch: Architecture, domains: int, cache: dict,
            gpus_per_domain_used: int | None = None):
    """The closed-form cost of an architecture on `domains` domains (`costing.design_cost`, on the scenario's
    pinned tier count), cached in `cache` by (architecture, domains, G_u); None when it cannot be built."""
    key = (arch, domains, gpus_per_domain_used)
    if key not in cache:
        try:
            cache[key] = design_cost(scenario, catalog, arch.platform, arch.nic, arch.rails_per_node, arch.switch,
                                     arch.oversubscription, domains, scenario.pin.tiers, arch.fabric,
                                     arch.above_pod_oversubscription, gpus_per_domain_used)
        except CatalogCannotBuild:
            cache[key] = None
    return cache[key]
