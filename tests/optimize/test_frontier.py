"""The cost–speed frontier and the next faster design (issue 24 item 5, SPEC §7 v3).

Checked two ways, never against the frontier's own output: the Pareto set of the exhaustive
enumeration (`oracle.enumerate_designs`: every design evaluated one by one, no model), and a toy
catalog whose front is worked out by hand below.
"""
from __future__ import annotations

import copy

import pytest
from conftest import GPT3_1_3B, GPT3_6_7B, enumerated_designs, enumerated_spaces, load_doc

import solver
from solver.api import solve
from solver.optimize.frontier import FRONTIER_REL, NO_CHEAPER, NO_FASTER, faster_than, frontier, next_faster
from solver.optimize.ranking import same_speed
from solver.results import cost_per_million_tokens_usd, within_caps

# tp ∈ {1, 2}, as in tests/optimize/test_optimizer.py (whose enumerations of the same spaces this file shares,
# conftest.enumerated_designs): the uncapped front still has 12 points, its fast end changing tp, pp and the
# microbatch size (tp = 4, 8 doubled the enumeration and the frontier's solves and added one point).
H100 = dict(name="front-h100", workload=dict(model=GPT3_1_3B, global_batch_size=512), target=dict(step_time_s=2.0),
            constraints=dict(platforms=["hgx-h100", "dgx-h100"], nic_configurations="any", rails_per_node=[1, 8]),
            parallelism=dict(tp=[1, 2], cp=1, pp=[1, 2], vp=1, microbatch_size=[1, 2]))

# Small design spaces on the shipped catalog, each with a cap or objective the frontier must respect.
SPACES = {
    "h100-uncapped": H100,
    # a budget that cuts the front: the uncapped front's fastest points cost more than $12M
    "h100-budget": dict(copy.deepcopy(H100), constraints=dict(H100["constraints"], budget_usd=12e6)),
    "h100-tco": dict(copy.deepcopy(H100), objective="tco"),
    # Blackwell 8-GPU nodes against NVL72 (G_u = 72 or 64), capped at 512 GPUs
    "b200-nvl72-max-gpus": dict(
        name="front-b200", workload=dict(model=GPT3_6_7B, global_batch_size=1024), target=dict(step_time_s=3.0),
        constraints=dict(platforms=["hgx-b200", "gb200-nvl72"], max_gpus=512, nic_configurations="any", rails_per_node=[1, 4]),
        parallelism=dict(tp=[2, 4, 8], cp=1, pp=[1, 2, 4], vp=1, microbatch_size=1)),
    # Demanded margins (robustness rows) and fsdp's non-affine terms: the next faster design is found with
    # frontier_step_k on the point-pruned model here (a lowered target would demand the margins at it too)
    "h100-fsdp-margins": dict(
        name="front-fsdp", workload=dict(model=GPT3_6_7B, global_batch_size=256, optimizer="fsdp"),
        target=dict(step_time_s=2.5), constraints=dict(platforms=["hgx-h100"], nic_configurations="any", rails_per_node=[1, 2, 8]),
        robustness=dict(compute_slowdown=0.1, bandwidth_derate=0.3),
        parallelism=dict(tp=[1, 2], cp=1, pp=[1, 2], vp=[1, 2], microbatch_size=[1, 2])),  # as test_optimizer's
    # A facility power cap that bites (53.5 kW), two oversubscriptions; compute and fabric only, no hot spares
    # (the cap was chosen for the compute and fabric power alone)
    "a100-h200-power": dict(
        name="front-a100", workload=dict(model=GPT3_6_7B, global_batch_size=512), target=dict(step_time_s=6.0),
        capex_scope="compute_fabric_only", reliability=dict(spares=False),
        constraints=dict(platforms=["dgx-a100", "hgx-h200"], nic_configurations="any", rails_per_node=[2, 4], oversubscription=[1, 2],
                         facility_power_kw=53.5),
        parallelism=dict(tp=[4, 8], cp=1, pp=[1, 2], vp=1, microbatch_size=[1, 2])),
}


def pareto(designs) -> list:
    """The Pareto set of (cost, step time) by a sweep over the enumeration: cheapest first (to the
    cent; at equal cost the fastest), keep a design when it is faster than every cheaper kept one
    (by the frontier's ε, `faster_than`). Independent of the model: plain sorting of evaluated designs."""
    ordered = sorted(designs, key=lambda d: (round(d.objective_usd, 2), d.perf.step_time_s))
    front: list = []
    for d in ordered:
        if not front or faster_than(d.perf.step_time_s, front[-1].perf.step_time_s):
            front.append(d)
    return front


def pareto_from_fast_end(designs) -> list:
    """The same set found from the fast end (`objective: fastest`), by its definition: the fastest design (of the
    equally fast, `same_speed`, the cheapest); then the same among the designs cheaper than it by the frontier's
    ε; and so on. Reported cheapest first."""
    front: list = []
    left = list(designs)
    while left:
        fastest_s = min(d.perf.step_time_s for d in left)
        best = min((d for d in left if same_speed(d.perf.step_time_s, fastest_s)), key=lambda d: d.objective_usd)
        front.append(best)
        left = [d for d in left if d.objective_usd <= best.objective_usd * (1 - FRONTIER_REL)]
    return front[::-1]


def assert_same_points(found, expected) -> None:
    assert len(found) == len(expected), ([(round(d.objective_usd, 2), d.perf.step_time_s) for d in found],
                                         [(round(d.objective_usd, 2), d.perf.step_time_s) for d in expected])
    for f, e in zip(found, expected):
        assert round(f.objective_usd, 2) == round(e.objective_usd, 2)  # to the cent
        assert f.perf.step_time_s == pytest.approx(e.perf.step_time_s, rel=1e-9, abs=0)


@pytest.fixture(scope="module")
def enumerated(default_catalog):
    return enumerated_spaces(SPACES, default_catalog)


# `objective: fastest` without a target, within a budget: the front is found from the fast end
FASTEST = dict(copy.deepcopy(H100), name="front-fastest", objective="fastest", target={},
               constraints=dict(H100["constraints"], budget_usd=6e6))


def test_fastest_front_from_the_fast_end_equals_the_enumeration(default_catalog):
    designs = enumerated_designs(load_doc(FASTEST).scenario, default_catalog)
    expected = pareto_from_fast_end(designs)
    assert len(expected) >= 3
    front = frontier(load_doc(FASTEST), default_catalog, n=100)
    assert front.start == "fastest" and front.status == "optimal" and front.ended == NO_CHEAPER
    assert_same_points(front.points, expected)
    assert_same_points(pareto(designs), expected)  # the same set as from the cheap end (here: no near-ties)
    cut = frontier(load_doc(FASTEST), default_catalog, n=2)  # the two fastest points, still reported cheapest first
    assert_same_points(cut.points, expected[-2:])
    assert "2 point(s) asked; cheaper designs may exist" == cut.ended


@pytest.mark.parametrize("name", sorted(SPACES))
def test_frontier_equals_the_pareto_set_of_the_enumeration(name, default_catalog, enumerated):
    expected = pareto(enumerated[name])
    assert len(expected) >= 2  # a front worth checking
    front = frontier(load_doc(SPACES[name]), default_catalog, n=100)
    assert front.status == "optimal" and front.ended == NO_FASTER and front.complete
    assert_same_points(front.points, expected)
    steps = [d.perf.step_time_s for d in front.points]
    costs = [d.objective_usd for d in front.points]
    assert steps == sorted(steps, reverse=True) and costs == sorted(costs)  # faster costs more
    sc = load_doc(SPACES[name]).scenario
    assert all(within_caps(d, sc.constraints, sc.pin) for d in front.points)


def test_the_budget_cuts_the_front(enumerated):
    """The capped front is the uncapped one up to the budget: the caps are respected, not filtered after."""
    free, capped = pareto(enumerated["h100-uncapped"]), pareto(enumerated["h100-budget"])
    assert max(d.cost.capex_usd for d in free) > 12e6 >= max(d.cost.capex_usd for d in capped)
    assert len(capped) < len(free)


@pytest.mark.parametrize("name", sorted(SPACES))
def test_next_faster_agrees_with_the_enumeration(name, default_catalog, enumerated):
    """The cheapest design strictly faster than #1 (at equal cost the fastest), or none."""
    ls = load_doc(SPACES[name])
    result = solve(ls, default_catalog, top_k=1)
    first = result.designs[0]
    faster = [d for d in enumerated[name] if faster_than(d.perf.step_time_s, first.perf.step_time_s)]
    nf = next_faster(result, ls, default_catalog)
    assert nf is not None and nf["status"] == "optimal"
    if not faster:
        assert not nf["found"] and "none" in nf["text"]
        return
    best = min(faster, key=lambda d: (round(d.objective_usd, 2), d.perf.step_time_s))
    assert nf["found"]
    assert round(nf["cost_usd"], 2) == round(best.objective_usd, 2)
    assert nf["step_time_s"] == pytest.approx(best.perf.step_time_s, rel=1e-9, abs=0)
    assert nf["cost_change"] == pytest.approx(best.objective_usd / first.objective_usd - 1, rel=1e-9)


def test_frontier_stops_at_n_points_and_says_so(default_catalog, enumerated):
    front = frontier(load_doc(SPACES["h100-uncapped"]), default_catalog, n=2)
    assert_same_points(front.points, pareto(enumerated["h100-uncapped"])[:2])
    assert not front.complete and "2 point(s) asked" in front.ended


def test_frontier_cut_short_by_the_time_limit_says_so(default_catalog):
    """A limit too short for even the design space: no point found, an error (exit 3), never a silent empty front;
    with some points found the status is time_limit (docs/reliability.md)."""
    from solver.errors import SolverFailure

    with pytest.raises(SolverFailure, match="time limit"):
        frontier(load_doc(SPACES["h100-uncapped"]), default_catalog, n=10, time_limit_s=1e-4)


def test_frontier_stopped_by_the_time_limit_after_two_points_says_so(default_catalog, enumerated, monkeypatch):
    """A time-limit stop after two points, simulated at the adapter (the fifth solve — point 3's first
    stage — ends at the limit without an incumbent; everything else runs for real): the two points are
    the enumeration's first two, the status is time_limit and the reason says so, never a complete front."""
    from solver.optimize import highs

    real, calls = highs.HighsAdapter.solve, []

    def stopped(self, model, time_limit_s=None):
        calls.append(1)
        if len(calls) == 5:
            return highs.SolveOutcome("time_limit", None, None, None, 0.0, "maxTimeLimit")
        return real(self, model, time_limit_s)

    monkeypatch.setattr(highs.HighsAdapter, "solve", stopped)
    front = frontier(load_doc(SPACES["h100-uncapped"]), default_catalog, n=10, time_limit_s=600)
    assert_same_points(front.points, pareto(enumerated["h100-uncapped"])[:2])
    assert front.status == "time_limit" and not front.complete
    assert front.ended == "the time limit cut the search short; faster designs may exist"
    assert front.to_dict()["status"] == "time_limit"


def test_epsilon_is_above_the_integrality_tolerance():
    """ε must exceed HiGHS's mip_feasibility_tolerance (1e-7, optimize/highs.py) or a point could pass its own row."""
    assert 1e-7 < FRONTIER_REL <= 1e-5
    assert faster_than(1.0 - 2e-6, 1.0) and not faster_than(1.0 - 1e-7, 1.0)


# ------------------------------------------------------------------ hand-worked toy front
#
# Toy catalog (tests/data/toy-catalog.yaml, the arithmetic of tests/optimize/test_optimizer.py §3): one GPU per node,
# capex = d·price + $1,000 (one 64-port switch), step(d) = F_hw / (d·peak) with F_hw = 103,079,215,104 FLOPs,
# d ∈ {1, 2, 4, …, 64}; target 4 ms: 1-TFLOP/s boxes need d ≥ 32, fast-box (4 TFLOP/s) d ≥ 8.
#   design        capex        step              TCO = capex + 5·8,760·0.1·kW = capex + 4,380·kW
#   cheap-box 32  $161,000     3.2212 ms (64 kW) $441,320
#   cheap-box 64  $321,000     1.6106 ms (128)   $881,640
#   slow-box  32  $321,000     3.2212 ms (32)    $461,160
#   slow-box  64  $641,000     1.6106 ms (64)    $921,320
#   fast-box   8  $241,000     3.2212 ms (40)    $416,200
#   fast-box  16  $481,000     1.6106 ms (80)    $831,400
#   fast-box  32  $961,000     0.8053 ms (160)   $1,661,800
#   fast-box  64  $1,921,000   0.4027 ms (320)   $3,322,600
# Capex front: cheap-box 32 ($161,000, the cheapest); strictly faster than 3.2212 ms, the cheapest is $321,000:
# cheap-box 64 (1.6106 ms; slow-box 32 costs the same but is not faster); then fast-box 32 ($961,000, 0.8053 ms),
# fast-box 64 ($1,921,000, 0.4027 ms); nothing is faster (d ≤ B = 64). Four points.
# TCO front: fast-box 8 ($416,200), fast-box 16 ($831,400 < cheap-box 64's $881,640), fast-box 32, fast-box 64.
# max_gpus = 32 (capex): cheap-box 32, then fast-box 16 ($481,000: cheap-box 64 is over the cap), fast-box 32; none.

F_HW = 103_079_215_104
TOY_MODEL = dict(layers=1, hidden_size=256, ffn_hidden_size=256, ffn_type="gelu", attention_heads=1,
                 vocab_size=2048, seq_len=256)


def toy(**changes) -> dict:
    doc = dict(name="toy", workload=dict(model=TOY_MODEL, global_batch_size=64, activation_recompute="none",
                                         grad_reduce_dtype="bf16"),
               target=dict(step_time_s=0.004), overlap=dict(tp=1, cp=1, pp=1, dp=1),
               parallelism=dict(tp=1, cp=1, pp=1, vp=1, microbatch_size=1))
    doc.update(changes)
    return doc


def _points(front) -> list[tuple]:
    return [(d.architecture.platform, d.layout.dp, round(d.objective_usd, 2)) for d in front.points]


def test_toy_capex_front_by_hand(toy_catalog):
    front = frontier(load_doc(toy()), toy_catalog, n=10)
    assert _points(front) == [("cheap-box", 32, 161_000.0), ("cheap-box", 64, 321_000.0),
                              ("fast-box", 32, 961_000.0), ("fast-box", 64, 1_921_000.0)]
    assert [d.perf.step_time_s for d in front.points] == pytest.approx(
        [F_HW / 32e12, F_HW / 64e12, F_HW / 128e12, F_HW / 256e12], rel=1e-12)
    assert front.complete and front.status == "optimal"


def test_api_frontier_takes_a_dict_and_a_point_count(toy_catalog):
    front = solver.api.frontier(toy(), toy_catalog, points=2)
    assert _points(front) == [("cheap-box", 32, 161_000.0), ("cheap-box", 64, 321_000.0)]


def test_toy_fastest_front_from_the_fast_end_by_hand(toy_catalog):
    """objective fastest, no target, budget $500,000 (any d | 64 now: step = F_hw/(d·peak)). Fastest:
    1.6106 ms — cheap-box 64 ($321,000) or fast-box 16 ($481,000): the cheaper, $321,000. Strictly
    cheaper than that, the fastest is 3.2212 ms: cheap-box 32 $161,000 (fast-box 8 $241,000; slow-box 32
    costs $321,000, not cheaper). Then 6.4425 ms: cheap-box 16, 16·5,000 + 1,000 = $81,000 (fast-box 4
    $121,000); then 12.885 ms: cheap-box 8 $41,000 (fast-box 2 $61,000). Four points asked; cheapest first."""
    front = frontier(load_doc(toy(objective="fastest", target={}, constraints=dict(budget_usd=500_000))), toy_catalog,
                     n=4)
    assert _points(front) == [("cheap-box", 8, 41_000.0), ("cheap-box", 16, 81_000.0), ("cheap-box", 32, 161_000.0),
                              ("cheap-box", 64, 321_000.0)]
    assert [d.perf.step_time_s for d in front.points] == pytest.approx([F_HW / 8e12, F_HW / 16e12, F_HW / 32e12,
                                                                        F_HW / 64e12], rel=1e-12)
    assert front.start == "fastest" and not front.complete


def test_toy_tco_front_by_hand(toy_catalog):
    front = frontier(load_doc(toy(objective="tco")), toy_catalog, n=10)
    assert _points(front) == [("fast-box", 8, 416_200.0), ("fast-box", 16, 831_400.0),
                              ("fast-box", 32, 1_661_800.0), ("fast-box", 64, 3_322_600.0)]


def test_toy_front_within_max_gpus_by_hand(toy_catalog):
    front = frontier(load_doc(toy(constraints=dict(max_gpus=32))), toy_catalog, n=10)
    assert _points(front) == [("cheap-box", 32, 161_000.0), ("fast-box", 16, 481_000.0), ("fast-box", 32, 961_000.0)]
    assert front.ended == NO_FASTER


def test_toy_next_faster_by_hand(toy_catalog):
    """#1 cheap-box 32 ($161,000, 3.2212 ms); next faster cheap-box 64 ($321,000, 1.6106 ms):
    321,000 / 161,000 − 1 = +99.4 % capex, −50.0 % step time."""
    ls = load_doc(toy())
    result = solve(ls, toy_catalog, top_k=1)
    nf = next_faster(result, ls, toy_catalog)
    assert nf["found"] and nf["cost_usd"] == pytest.approx(321_000.0)
    assert nf["cost_change"] == pytest.approx(321_000 / 161_000 - 1)
    assert nf["step_time_change"] == pytest.approx(-0.5)
    assert nf["text"].startswith("the next faster design: +99.4 % capex, −50.0 % step time")


def test_toy_next_faster_none_within_the_caps(toy_catalog):
    """max_gpus = 8 with fast-box only: d = 8 is the only design (3.2212 ms); nothing faster fits."""
    ls = load_doc(toy(constraints=dict(max_gpus=8, platforms=["fast-box"])))
    result = solve(ls, toy_catalog, top_k=1)
    nf = next_faster(result, ls, toy_catalog)
    assert not nf["found"] and nf["text"] == f"the next faster design: none ({NO_FASTER})"


def test_cost_per_million_tokens_by_hand(toy_catalog):
    """cheap-box 32: $161,000 over 5 years (tco.years default) of B·s = 64·256 = 16,384 tokens per
    F_HW/32e12 = 3.2212e-3 s: 16,384 / 3.22122547e-3 = 5.0863e6 tokens/s; · 5 · 31,536,000 s = 8.0200e14
    tokens; $161,000 / 8.0200e14 · 1e6 = $0.00020075 per million tokens (a toy cluster)."""
    design = solve(load_doc(toy()), toy_catalog, top_k=1).designs[0]
    step = F_HW / 32e12
    tokens = 16_384 / step * 5 * 8760 * 3600
    assert tokens == pytest.approx(8.0200e14, rel=1e-4)
    assert design.cost_per_million_tokens_usd == pytest.approx(161_000 / tokens * 1e6, rel=1e-12)
    assert design.cost_per_million_tokens_usd == pytest.approx(0.00020075, rel=1e-4)
    assert cost_per_million_tokens_usd(1e6, 1_000_000, 1.0, 0.5, 1.0) == pytest.approx(1e6 / (0.5 * 31_536_000))
