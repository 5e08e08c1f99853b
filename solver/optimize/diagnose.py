"""Infeasibility explained (SPEC §7): which requirement cannot be met, and by how much.

Every design an explanation names is a real design evaluated by `make_design` (`Explanation.named`
lists them with what the text claims of each): "the fastest allowed design within the caps" passes
every cap as bought (GPUs bought, not used; racks; power; budget), and "a design meeting the
target" meets it. tests/test_reliability_round2.py re-evaluates each one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..costing import compute_units, nodes_per_unit
from ..deadline import NO_LIMIT, Deadline
from ..design_space import DesignSpace, allowed_tiers, architectures, build_design_space, fabric_spec_of
from ..errors import InputError
from ..fabrics import family
from ..failures import goodput_in_target
from ..inputs.schema import Target
from ..perf.layout import expert_text
from ..results import Design, make_design
from ..units import SECONDS_PER_DAY
from . import model as milp
from .data import ModelData, model_data
from .highs import HighsAdapter
from .model import CAP_NAMES
from .ranking import k_best

FASTEST_WITHIN_CAPS = "fastest within the caps"
MEETS_TARGET = "meets the target"
RELAXED_TARGET_S = 1e7  # the largest target a scenario may state: every step time meets it


@dataclass
class Explanation:
    """The text of an infeasibility explanation and the designs it names, each with its claim."""

    text: str
    named: list[tuple[Design, str]] = field(default_factory=list)


def explain_infeasible(space: DesignSpace, deadline: Deadline = NO_LIMIT) -> str:
    """Say which requirement cannot be met and by how much, and what the caps and pins can buy."""
    return explain(space, deadline).text


def explain(space: DesignSpace, deadline: Deadline = NO_LIMIT) -> Explanation:
    """The explanation, with the designs it names."""
    sc = space.scenario
    target = space.target_step_time_s
    if sc.pin.nodes is not None and sc.objective != "fastest" and math.isfinite(target):
        reached = _pinned_nodes_reach(space, deadline)
        if reached:
            return reached
    if not space.architectures and space.combinations == 0:
        return Explanation("no allowed architecture: the allow-lists and pins in constraints/pin leave no platform × "
                           "NIC × rails × switch combination (check that the switch generation matches the NIC)")
    if deadline.expired():
        return Explanation("no design meets every requirement; the time limit left no time to work out which "
                           "requirement cannot be met: allow more time")
    if not space.shapes:
        return _target_unreachable(space, deadline)
    out = _caps_exclude(space, deadline)
    assert out is not None  # only a space built with a budget cut can leave the answer unproven
    return out


def explain_within(space: DesignSpace, budget_cut_usd: float, deadline: Deadline = NO_LIMIT) -> Explanation | None:
    """The explanation of a space built with the budget cut at L = `budget_cut_usd` (`build_design_space`'s
    `budget_cut_usd`: the points whose capex lower bound is over L left out unevaluated, every other point kept as
    without the cut), when it is provably the uncut space's; None when it is not (then build without the cut).

    The soft-caps MILP (`model.add_objective`) minimises F = 10⁹·Σ_c slack_c / cap_c + capex (M$)·10⁻⁶. A point left
    out costs more than L on every architecture, so its budget slack alone makes F > 10⁹·(L − B)/B (B = budget_usd).
    When the cut space's optimum F* is at most that, no point left out can beat or tie it: the optimum, and so the
    explanation read off it, is the uncut space's (`_proven_within`). A cut space with no shape, a pinned node count or
    a solve without a solution is never taken as proof."""
    sc = space.scenario
    if sc.pin.nodes is not None or not space.shapes or not space.complete or deadline.expired():
        return None
    return _caps_exclude(space, deadline, budget_cut_usd)


def _proven_within(model, budget_usd: float, budget_cut_usd: float) -> bool:
    """F* ≤ 10⁹·(L − B)/B, with a margin of 10⁻⁶ relative for the solver's tolerances (`explain_within`)."""
    import pyomo.core as pyo

    best = float(pyo.value(model.objective))
    return best * (1 + 1e-6) + 1e-6 < 1e9 * (budget_cut_usd - budget_usd) / budget_usd


def _caps_exclude(space: DesignSpace, deadline: Deadline, budget_cut_usd: float | None = None) -> Explanation | None:
    """The layouts can meet the target; some cap cannot. Re-solve with penalised cap slacks, name
    each cap with what the cheapest design needs, and say what the caps can buy. With `budget_cut_usd` (a space
    built with the budget cut there, `explain_within`): None when the optimum is not proven the uncut space's."""
    sc, target = space.scenario, space.target_step_time_s
    data = model_data(space)
    model = milp.build_model(data, soft_caps=True)
    outcome = HighsAdapter(time_limit_s=deadline.remaining_s()).solve(model)
    if budget_cut_usd is not None:
        budget = sc.constraints.budget_usd
        if not outcome.has_solution or budget is None or not _proven_within(model, budget, budget_cut_usd):
            return None
    if not outcome.has_solution:
        too_big = _beyond_every_fabric(space, data)
        if too_big:
            return Explanation(too_big)
        return Explanation(f"no design could be built even with the caps relaxed (solver status {outcome.status})")
    import pyomo.core as pyo

    choice = milp.decode(model)
    shape = space.shapes[choice.shape_index]
    design = make_design(space.scenario, space.catalog, data.archs[choice.arch_index].arch, shape.layout(choice.d),
                         space.target_step_time_s, sc.pin.tiers)
    if design is None:  # the model's fabric rows and the evaluator agree on what fits (tests)
        return Explanation("no design could be evaluated with the caps relaxed")
    out = Explanation("", [(design, MEETS_TARGET)])
    parts = []
    c = design.cost
    needs = {"max_gpus": (c.gpus, "{:,.0f} GPUs"), "budget_usd": (c.capex_usd, "${:,.0f}"),
             "facility_power_kw": (c.facility_power_kw, "{:,.0f} kW"), "max_racks": (c.racks, "{:,.0f} racks")}
    meeting = f"meeting the {target:.3g} s target" if math.isfinite(target) else "of the design space"
    for name, cap in data.caps.items():
        if cap is None or pyo.value(model.cap_slack[name]) <= 1e-6:
            continue
        value, fmt = needs[name]
        parts.append(f"{name}: the cheapest design {meeting} ({design.label}, "
                     f"{c.gpus:,} GPUs) needs {fmt.format(value)}; {name} is {fmt.format(cap)}")
    fastest = fastest_within_caps(space, deadline)
    if fastest is not None:
        parts.append(_fastest_text(space, fastest))
        out.named.append((fastest, FASTEST_WITHIN_CAPS))
    out.text = "; ".join(parts) if parts else "the caps together leave no design (each alone could be met)"
    lead = _days_lead(space, fastest, design, [n for n in data.caps if data.caps[n] is not None
                                               and pyo.value(model.cap_slack[n]) > 1e-6])
    out.text = f"{lead}. Details: {out.text}" if lead else out.text
    return out


def _short_cap(name: str, value: float) -> str:
    """A cap or a need in the buyer's words: $150M, 12.1 MW, 4,608 GPUs, 64 racks."""
    if name == "budget_usd":
        return f"${value / 1e6:,.0f}M" if value >= 1e6 else f"${value:,.0f}"
    if name == "facility_power_kw":
        return f"{value / 1000:,.1f} MW" if value >= 1000 else f"{value:,.0f} kW"
    return f"{value:,.0f} " + ("GPUs" if name == "max_gpus" else "racks")


def _days_lead(space: DesignSpace, fastest: Design | None, meeting: Design | None, exceeded: list[str]) -> str:
    """A target given in days, answered in days: 'within $150M and 12.0 MW the best finishes in ≈ 165 days
    (15.2 s per step); 90 days needs ≈ $276M and 12.1 MW (…)'. Empty when the target was a step time."""
    sc = space.scenario
    days = sc.target.train_days
    if days is None or sc.target.train_tokens is None:
        return ""
    con = sc.constraints
    caps = [_short_cap(n, getattr(con, n)) for n in CAP_NAMES if getattr(con, n) is not None]
    parts = []
    steps = sc.train_steps()
    if fastest is not None and steps is not None and fastest.goodput > 0:
        where = f"within {' and '.join(caps)}" if caps else "within the allowed designs"
        finish = steps * fastest.perf.step_time_s / (fastest.goodput * SECONDS_PER_DAY)  # Design.train_days
        parts.append(f"{where} the best finishes in ≈ {finish:,.0f} days "
                     f"({fastest.perf.step_time_s:.3g} s per step, {fastest.cost.gpus:,} GPUs, "
                     f"capex {_short_cap('budget_usd', fastest.cost.capex_usd)})")
    if meeting is not None and exceeded:
        c = meeting.cost
        have = {"max_gpus": c.gpus, "budget_usd": c.capex_usd, "facility_power_kw": c.facility_power_kw,
                "max_racks": c.racks}
        needs = " and ".join(_short_cap(n, have[n]) for n in CAP_NAMES if n in exceeded)
        parts.append(f"{days:g} days needs ≈ {needs} ({meeting.label}, {c.gpus:,} GPUs, "
                     f"{space.target_step_time_s:.3g} s per step)")
    return "; ".join(parts)


def _target_unreachable(space: DesignSpace, deadline: Deadline) -> Explanation:
    """No layout meets the target (or fits in memory): say what the fastest allowed design reaches."""
    sc = space.scenario
    target = space.target_step_time_s
    lean_gb, usable_gb, lean_key = space.leanest
    if space.fastest[0] == float("inf"):
        return Explanation(f"no allowed layout fits in GPU memory: the leanest needs {lean_gb:,.1f} GB per GPU "
                           f"({lean_key}) but {usable_gb:,.1f} GB is usable; allow larger tp/pp/cp, "
                           "a smaller microbatch_size, more activation recompute, or a GPU with more memory")
    in_target = goodput_in_target(sc) and space.catalog.reliability is not None
    out = Explanation(f"the target step time of {target:.3g} s" + (" (for step ÷ goodput)" if in_target else "")
                      + " cannot be met: ")
    fastest = fastest_within_caps(space, deadline)
    lead = _days_lead(space, fastest, None, [])
    if lead:
        out.text = (f"training {sc.target.train_tokens:,.3g} tokens in {sc.target.train_days:g} days cannot be met: "
                    f"{lead}. Details: {out.text}")
    if fastest is not None:
        out.text += _fastest_text(space, fastest)
        if in_target and fastest.reliability is not None and fastest.reliability.goodput > 0:
            g = fastest.reliability.goodput
            out.text += f", {fastest.perf.step_time_s / g:.3g} s ÷ its goodput {g:.1%}"
        out.named.append((fastest, FASTEST_WITHIN_CAPS))
    elif deadline.expired():
        out.text += (f"the fastest allowed layout reaches {space.fastest[0]:.3g} s ({space.fastest[1]}); the time limit "
                     "cut short the search for the fastest design within the caps")
    else:
        out.text += (f"the fastest allowed layout reaches {space.fastest[0]:.3g} s ({space.fastest[1]}) but no design "
                     f"within the caps{_caps_text(space)} was found")
    if in_target and fastest is not None and fastest.reliability is not None and fastest.perf.step_time_s <= target:
        out.text += _goodput_limit(fastest, target)
        return out
    if sc.constraints.max_gpus:
        needed = _gpus_needed_without_cap(space, deadline)
        if needed:
            text, design = needed
            out.named += [(design, MEETS_TARGET)] if design is not None else []
            out.text += f"; {target:.3g} s needs {text}; max_gpus is {sc.constraints.max_gpus:,}"
            return out
    if fastest is not None and fastest.perf.microbatches == 1:  # dp · mbs = B: more GPUs cannot shorten the step
        out.text += (f"; the batch is the limit: the fastest design already splits the {sc.workload.global_batch_size:,}"
                     f"-sequence batch into one microbatch per data-parallel replica (dp = {fastest.layout.dp:,}), so "
                     "more GPUs cannot help; relax the target, raise global_batch_size, or allow larger tp/cp/pp or "
                     "faster platforms")
        return out
    out.text += "; relax the target, allow more GPUs, or allow faster platforms, more rails or other layouts"
    return out


def _goodput_limit(design: Design, target: float) -> str:
    """The fastest design meets the target per step but not per step ÷ goodput: the goodput is the limit (issue 44:
    a goodput of ≈ 0 was explained as the batch, "raise global_batch_size")."""
    rel = design.reliability
    assert rel is not None
    effective = f"{design.perf.step_time_s / rel.goodput:.3g} s" if rel.goodput > 0 else "unbounded"
    mtbf = f"{rel.job_mtbf_h:.3g} h" if math.isfinite(rel.job_mtbf_h) else "no failures"
    return (f"; the goodput is the limit: {design.perf.step_time_s:.3g} s per step is within the {target:.3g} s target, "
            f"but the design's goodput is {rel.goodput:.1%} (a checkpoint takes {rel.checkpoint_write_s:.3g} s to write, "
            f"a restart {rel.restart_min:.3g} min, job MTBF {mtbf}), so step ÷ goodput is {effective}; raise the "
            "checkpoint write bandwidth (reliability.checkpoint_write_gbyte_s), shorten reliability.restart_min, or give "
            "the goodput you expect as target.goodput")


def _caps_text(space: DesignSpace) -> str:
    con = space.scenario.constraints
    caps = [f"{name} = {_cap_text(name, getattr(con, name))}" for name in CAP_NAMES if getattr(con, name) is not None]
    return f" ({', '.join(caps)})" if caps else ""


def _cap_text(name: str, value: float) -> str:
    return f"${value:,.0f}" if name == "budget_usd" else f"{value:,.0f}" + (" kW" if name == "facility_power_kw" else "")


def _fastest_text(space: DesignSpace, design: Design) -> str:
    """What the caps can buy: 'within max_gpus = 16,384 the fastest design reaches 0.461 s per step (…)'."""
    con = space.scenario.constraints
    caps = ", ".join(f"{name} = {_cap_text(name, getattr(con, name))}" for name in CAP_NAMES
                     if getattr(con, name) is not None)
    where = f"within {caps} the fastest design" if caps else "the fastest allowed design"
    return f"{where} reaches {_reached(design)}"


def fastest_design(scenario, catalog, deadline: Deadline = NO_LIMIT, memo=None) -> Design | None:
    """The fastest design of `scenario` with its target removed, within its caps and pins (SPEC §7
    `fastest`, solved exactly by the MILP): what the caps and pins can buy. None when they admit no
    design, or when the time limit cut the search short (then no design is proven the fastest)."""
    fast = scenario.model_copy(update={"objective": "fastest", "target": Target()})
    space = build_design_space(fast, catalog, deadline=deadline, memo=memo, top_k=1, one_layout_per_cost=True)
    if not space.shapes or not space.complete:
        return None
    try:
        search = k_best(space, 1, deadline=deadline)
    except InputError:
        return None
    if not search.designs or not search.complete:
        return None
    return search.designs[0]


def fastest_within_caps(space: DesignSpace, deadline: Deadline = NO_LIMIT) -> Design | None:
    """The design with the smallest step time that passes every cap as bought (GPUs bought, not
    used; racks; power; budget), fits in memory and can be built (ties: the cheapest), or None.
    Cross-checked against the exhaustive enumeration in tests/test_reliability_round2.py."""
    best = fastest_design(space.scenario, space.catalog, deadline, memo=space.memo)
    if best is not None:
        best.target_step_time_s = space.target_step_time_s
    return best


def _reached(design: Design) -> str:
    c = design.cost
    return (f"{design.perf.step_time_s:.3g} s per step ({design.label}, {c.gpus:,} GPUs bought, "
            f"{_layout(design)}, capex ${c.capex_usd:,.0f})")


def _layout(design: Design) -> str:
    lay = design.layout
    return f"tp={lay.tp} cp={lay.cp} pp={lay.pp} vp={lay.vp} dp={lay.dp} mbs={lay.microbatch_size}" + expert_text(lay)


def _pinned_nodes_reach(space: DesignSpace, deadline: Deadline) -> Explanation | None:
    """With pin.nodes, when no layout on that many nodes meets the target: the step time it reaches."""
    sc = space.scenario
    design = fastest_design(sc, space.catalog, deadline)
    if design is None or design.perf.step_time_s <= space.target_step_time_s * (1 + 1e-9):
        return None  # the pinned size can meet the target: something else is in the way
    design.target_step_time_s = space.target_step_time_s
    return Explanation(f"pin.nodes = {sc.pin.nodes:,}: no design on {sc.pin.nodes:,} nodes meets the "
                       f"{space.target_step_time_s:.3g} s target; the fastest reaches {_reached(design)}; pin more "
                       "nodes, remove pin.nodes, or relax the target", [(design, FASTEST_WITHIN_CAPS)])


def _beyond_every_fabric(space: DesignSpace, data: ModelData) -> str | None:
    """When every layout that meets the target needs more nodes than any allowed fabric of its own
    performance class (platform, NIC, rails, family) holds: say so, and name the fabric families
    (allowed or not) that would hold them."""
    plats = space.catalog.by_id("platforms")
    biggest: dict = {}
    for ad in data.archs:
        cap = max((ad.fab.cap[t] for t in ad.tiers), default=0)
        if cap > biggest.get(ad.arch.perf, (0, None))[0]:
            biggest[ad.arch.perf] = (cap, ad.arch)
    fewest = None
    for s in space.shapes:
        plat = plats[s.perf.platform]
        nodes = min(compute_units(plat, dom) * nodes_per_unit(plat) for dom in s.domains)
        cap = max(biggest.get(p, (0, None))[0] for p in s.perfs)
        if nodes <= cap:
            return None  # this layout fits some allowed fabric: the caps or the tiers are not the reason
        if fewest is None or nodes < fewest[0]:
            fewest = (nodes, s)
    if fewest is None:
        return None
    nodes, s = fewest
    cap, arch = max((biggest.get(p, (0, None)) for p in s.perfs), key=lambda x: x[0])
    held = (f"more than the largest allowed fabric holds ({cap:,} nodes: {arch.fabric}, {arch.rails_per_node} "
            f"rail(s) of {arch.switch})" if arch is not None else "no allowed fabric holds it")
    text = (f"every design meeting the {space.target_step_time_s:.3g} s target needs at least {nodes:,} nodes "
            f"({s.describe(s.d_values[0])}), {held}")
    holding = _families_holding(space, s.perf.platform, nodes)
    if not holding:
        return text + ("; no fabric family holds them (fat-tree, multi-plane, rail-only): allow a higher-radix "
                       "switch, fewer rails per node or a slower target")
    allowed = {a.fabric for a in space.architectures}
    names = ", ".join(f"{name} (up to {n:,} nodes with {a.rails_per_node} rail(s) of {a.switch})"
                      for name, (n, a) in sorted(holding.items()))
    hint = "" if set(holding) <= allowed else "; allow them in constraints.fabrics"
    return text + f"; fabric families that would hold them: {names}{hint}"


def _families_holding(space: DesignSpace, platform: str, nodes: int) -> dict:
    """family → (largest node count, architecture) among the platform's architectures of every
    family (the scenario's constraints.fabrics and pin.fabric lifted) that hold `nodes` nodes."""
    sc = space.scenario
    free = sc.model_copy(update={"constraints": sc.constraints.model_copy(update={"fabrics": None}),
                                 "pin": sc.pin.model_copy(update={"fabric": None})})
    archs = [a for a in architectures(free, space.catalog) if a.platform == platform]
    out: dict = {}
    for a in archs:
        spec = fabric_spec_of(space.catalog, a)
        cap = max([family(a.fabric).max_nodes(spec, t) for t in allowed_tiers(a, archs, free)], default=0)
        if cap >= nodes and cap > out.get(a.fabric, (0, None))[0]:
            out[a.fabric] = (cap, a)
    return out


def _gpus_needed_without_cap(space: DesignSpace, deadline: Deadline) -> tuple[str, Design | None] | None:
    """The GPU count of the cheapest design meeting the target when max_gpus is lifted."""
    if deadline.expired():
        return None
    sc = space.scenario.model_copy(update={"constraints": space.scenario.constraints.model_copy(update={"max_gpus": None})})
    uncapped = build_design_space(sc, space.catalog, deadline=deadline)  # d_values[0]: each layout's smallest feasible d
    if not uncapped.shapes or not uncapped.complete:
        return None
    fewest = min(uncapped.shapes, key=lambda s: (s.gpus_per_replica * s.d_values[0], s.key))
    n = fewest.gpus_per_replica * fewest.d_values[0]
    text = f"at least {n:,} GPUs ({fewest.describe(fewest.d_values[0])})"
    search = k_best(uncapped, 1, deadline=deadline)
    if search.designs and search.complete:
        best = search.designs[0]
        return text + f"; the cheapest design meeting it buys {best.cost.gpus:,} ({best.label})", best
    return text, None
