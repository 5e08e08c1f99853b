"""The exhaustive enumeration the optimiser is checked against: every point of the unpruned
design space, evaluated one by one with the same evaluator, no model, no pruning."""
from __future__ import annotations

from ..design_space import allowed_tiers, architectures, dominated_by_fat_tree, hardware_of
from ..inputs.schema import Catalog, Scenario
from ..perf.layout import dp_candidates, layout_shapes, placement_problem
from ..perf.step import meets_target, performance
from ..perf.traffic import overlap_for
from ..perf.uncertainty import point_factor
from ..results import Design, make_design, within_caps


def enumerate_designs(scenario: Scenario, catalog: Catalog, target_step_time_s: float | None = None) -> list[Design]:
    """Every feasible design of the unpruned design space, evaluated one by one (the reference the
    optimiser is checked against; same evaluator, no model, no pruning)."""
    target = target_step_time_s or scenario.target_step_time_s()
    wl, con, pin, rob = scenario.workload, scenario.constraints, scenario.pin, scenario.robustness
    overlap = overlap_for(scenario)
    plats = catalog.by_id("platforms")
    out = []
    archs = architectures(scenario, catalog)
    shapes = layout_shapes(scenario)
    costed: dict = {}
    for arch in archs:
        plat = plats[arch.platform]
        hw = hardware_of(scenario, catalog, arch.perf)
        for g_used in plat.domain_sizes(pin.gpus_per_domain_used):
            for shape in shapes:
                for d in dp_candidates(scenario, shape):
                    lay = shape.layout(dp=d, gpus_per_domain_used=g_used)
                    if placement_problem(lay, wl, g_used) is not None:
                        continue
                    perf = performance(wl, lay, hw, overlap)
                    k = point_factor(wl.stack, hw.gpu_id, wl.precision, perf.compute_s + perf.bubble_s,
                                     perf.step_time_s, rob.quantile, wl.model.moe is not None)
                    if not perf.fits_memory or not meets_target(perf, target, rob.compute_slowdown,
                                                                rob.bandwidth_derate, k):
                        continue
                    design = make_design(scenario, catalog, arch, lay, target, pin.tiers)
                    if design is None or design.tiers not in allowed_tiers(arch, archs, scenario):
                        continue
                    if not design.meets_target:  # the target ÷ goodput, when it applies
                        continue
                    if dominated_by_fat_tree(scenario, catalog, arch, lay.domains, archs, costed, g_used):
                        continue
                    if within_caps(design, con, pin):
                        out.append(design)
    out.sort(key=Design.sort_key)
    return out


def best_distinct(designs: list[Design], k: int, distinct_by: str = "architecture") -> list[Design]:
    """The K best designs with distinct identities from an enumeration (sorted input); `fastest`
    designs go to `best_fastest`."""
    if designs and designs[0].objective == "fastest":
        return best_fastest(designs, k, distinct_by)
    seen, out = set(), []
    for d in designs:
        key = d.identity_by(distinct_by)
        if key not in seen:
            seen.add(key)
            out.append(d)
        if len(out) == k:
            break
    return out


def best_fastest(designs: list[Design], k: int, distinct_by: str = "architecture") -> list[Design]:
    """`fastest` by enumeration, rank by rank: among the designs of identities not yet ranked, the
    least step time T1; of those as fast as T1 (`ranking.same_speed`), the cheapest (then the
    layout and dp, as `Design.sort_key`)."""
    from .ranking import same_speed  # the one tie rule, shared with the model's second stage

    seen: set = set()
    out: list[Design] = []
    while len(out) < k:
        left = [d for d in designs if d.identity_by(distinct_by) not in seen]
        if not left:
            break
        fastest_s = min(d.perf.step_time_s for d in left)
        tied = [d for d in left if same_speed(d.perf.step_time_s, fastest_s)]
        best = min(tied, key=lambda d: (round(d.objective_usd, 2), d.perf.step_time_s, d.layout_identity, d.layout.dp))
        seen.add(best.identity_by(distinct_by))
        out.append(best)
    return out
