"""Equal-cost ties (SPEC §7: at equal cost, to the cent, the faster design) and the one test of whether a
point is a design the scenario accepts. The ranking (`ranking.k_best`) and the next faster design
(`frontier.next_faster`) both settle their ties here."""
from __future__ import annotations

from ..design_space import Architecture, DesignSpace, allowed_tiers, hardware_of
from ..inputs.schema import Scenario
from ..perf.layout import Layout, dp_candidates, layout_shapes, placement_problem
from ..perf.step import compute_and_bubble_s, performance
from ..perf.totals import parameter_count
from ..perf.traffic import overlap_for
from ..results import Design, make_design, within_caps
from .user_rows import active, keeps_row_quantities

EQUAL_COST_CANDIDATES = 200  # full evaluations tried per rank for a faster design at the same cost (bounds the work)
PLACEABLE_KEPT = 4  # scenarios whose placeable layouts by (G_u, domains) `_placeable_by_domains` keeps
_PLACEABLE: dict[int, tuple[Scenario, dict[tuple[int, int], list[Layout]], set[tuple[int, int]]]] = {}


def admissible_design(space: DesignSpace, arch: Architecture, layout: Layout, need_target: bool = True) -> Design | None:
    """The evaluated design of `arch` with `layout` if it is one the scenario accepts — buildable,
    fits in memory, within every cap (and a pinned node count), a 1-tier fabric only where allowed,
    and (with `need_target`) meeting the target step time — else None."""
    sc = space.scenario
    design = make_design(sc, space.catalog, arch, layout, space.target_step_time_s, sc.pin.tiers)
    if design is None or not design.perf.fits_memory or (need_target and not design.meets_target):
        return None
    if not within_caps(design, sc.constraints, sc.pin):
        return None
    if design.tiers not in allowed_tiers(arch, space.architectures, sc):
        return None
    return design


def same_domain_layouts(space: DesignSpace, design: Design) -> list[tuple[float, Layout]]:
    """Every placeable layout of the scenario (each layout shape, each G_u the platform allows, each d) that
    occupies as many NVLink domains as `design`, fits in memory and is strictly faster on its hardware, with
    its step time, fastest first. The design space is no guide here: it keeps per layout only the smallest
    feasible d and, of equal-cost points, the fastest of those, so a larger d of a dropped layout (tp 1 · dp 8
    on the 8 GPUs a tp 4 · pp 2 · dp 1 design occupies) is in none of its shapes.
    A layout whose T_comp + bubble (`perf.step.compute_and_bubble_s`, a lower bound on its step time: exposure and
    link capacity are ≥ 0) is not below the design's step time cannot be faster, so it is not evaluated in full."""
    sc, arch = space.scenario, design.architecture
    plat = space.catalog.by_id("platforms")[arch.platform]
    hw = hardware_of(sc, space.catalog, arch.perf)
    overlap = overlap_for(sc)
    params = parameter_count(sc.workload.model)
    domains, limit = design.layout.domains, design.perf.step_time_s
    out: list[tuple[float, Layout]] = []
    for g_used in plat.domain_sizes(sc.pin.gpus_per_domain_used):
        for lay in _placeable_by_domains(sc, g_used, domains):
            if compute_and_bubble_s(sc.workload, lay, hw, params) >= limit:
                continue
            perf = performance(sc.workload, lay, hw, overlap)
            if perf.fits_memory and perf.step_time_s < limit:
                out.append((perf.step_time_s, lay))
    out.sort(key=lambda item: item[0])
    return out


def _placeable_by_domains(sc: Scenario, g_used: int, domains: int) -> list[Layout]:
    """Every placeable layout of the scenario at G_u GPUs used per domain on `domains` domains (each layout shape, each
    d, in that order). The layouts by (G_u, domains) are made once per scenario and G_u, and each group's placement
    checked once: every rank's tie-break reads them (the same scenario object, kept with them; the last
    PLACEABLE_KEPT scenarios)."""
    kept = _PLACEABLE.get(id(sc))
    if kept is None or kept[0] is not sc:
        if len(_PLACEABLE) >= PLACEABLE_KEPT:
            _PLACEABLE.pop(next(iter(_PLACEABLE)))
        kept = _PLACEABLE[id(sc)] = (sc, {}, set())
    _, by_domains, placed = kept
    if (g_used, -1) not in by_domains:
        by_domains[(g_used, -1)] = []  # marks G_u as enumerated
        for shape in layout_shapes(sc):
            for d in dp_candidates(sc, shape):
                lay = shape.layout(dp=d, gpus_per_domain_used=g_used)
                by_domains.setdefault((g_used, lay.domains), []).append(lay)
    group = by_domains.get((g_used, domains), [])
    if (g_used, domains) not in placed:
        placed.add((g_used, domains))
        group[:] = [lay for lay in group if placement_problem(lay, sc.workload, g_used) is None]
    return group


def faster_at_equal_cost(space: DesignSpace, design: Design, distinct_by: str = "architecture") -> Design:
    """SPEC §7: at equal cost (to the cent) the faster design. The MILP's objective is the cost alone, and the
    design space keeps per layout only the smallest feasible d of each tier segment (and of the points on as
    many domains, the fastest of those), so the model may return a slower layout of the chosen architecture on
    as many NVLink domains (the same bill of materials). This tries the faster layouts on as many domains
    (`same_domain_layouts`), fastest first, and takes the first admissible one of the same cost to the cent, as
    the enumeration's order (`Design.sort_key`) does. Layout mode ranks every layout on its own and keeps the
    model's choice, and so does a solve with a user's Python rows (optimize/user_rows.py: they may read the layout,
    which the layouts tried here change); a scenario's `constraints.user` rows read only what the swap must keep
    (`user_rows.keeps_row_quantities`), so the swap stays."""
    if distinct_by == "layout" or active():
        return design
    cents = round(design.objective_usd, 2)
    for tried, (_, lay) in enumerate(same_domain_layouts(space, design)):
        if tried >= EQUAL_COST_CANDIDATES:
            break
        found = admissible_design(space, design.architecture, lay)
        if found is not None and round(found.objective_usd, 2) == cents and found.sort_key() < design.sort_key() \
                and keeps_row_quantities(space.scenario, design, found):
            return found
    return design
