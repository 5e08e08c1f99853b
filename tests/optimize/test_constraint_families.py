"""Tiny hand-solvable MILPs, one per constraint family of solver/optimize/model.py (oemof style).

Each test builds the real model with HiGHS on a design space whose step-time, exposure and memory
coefficients are set by hand (no performance model involved), on the round-priced catalog of
tests/builders.py, and checks the optimum against arithmetic in the comments.

Catalog (tests/builders.py): hgx-t node $300,000, 10 kW, 8 RU, 8 GPUs = one NVLink domain;
ndr-nic $1,500, 20 W; ndr-64 switch $30,000, 1 kW, 1 RU, 64 ports; node–leaf link at 10 m is the
optical option: cable $50, switch-end twin-port module $1,000 (2 links, 15 W), NIC-end module $600
(8 W); leaf–spine: cable $60, twin-port modules $1,000 at both ends (16 W); rack $5,000, 40 kW, 42 RU
(4 nodes by power). Facility PUE 1.25, $0.10/kWh.
"""
from __future__ import annotations

import pyomo.environ as pyo
import pytest
from builders import make_catalog, make_scenario

from solver.design_space import Architecture, Condition, DesignSpace, Exposure, Shape
from solver.optimize.data import model_data
from solver.optimize.highs import HighsAdapter
from solver.optimize.model import build_model, decode
from solver.perf.layout import LayoutShape

CATALOG = make_catalog()
ONE_RAIL = Architecture("hgx-t", "ndr-nic", 1, "ndr-64", 1.0)
TWO_RAILS = Architecture("hgx-t", "ndr-nic", 2, "ndr-64", 1.0)


def affine_exposure(name: str, pieces: list[tuple[float, float]], d_values: list[int]) -> Exposure:
    """A class whose pieces are affine in d, d·(a·T − W) = c0 + c1·d, evaluated at each allowed d (the model carries
    one coefficient per (shape, d) point, SPEC §4.5)."""
    return Exposure(name, [[c0 + c1 * d for d in d_values] for c0, c1 in pieces])


def shape(arch: Architecture, d_values: list[int], comp0: float, comp1: float = 0.0, exposures=(),
          mem0: float = 0.0, mem1: float = 1.0, hbm: float = 80.0, capacity=(0.0, 0.0), margins=()) -> Shape:
    """A tp = 8 layout on 8-GPU domains: d data-parallel replicas occupy d nodes (d domains).
    d·T_comp = comp0 + comp1·d; d·mem = mem0 + mem1·d; `exposures` are (name, [(c0, c1), …]); d·(link busy time)
    = capacity[0] + capacity[1]·d; `margins` are (condition name, factor on d·T_comp)."""
    ds = list(d_values)
    xs = [affine_exposure(name, pieces, ds) for name, pieces in exposures]
    busy = [capacity[0] + capacity[1] * d for d in ds]
    nominal = Condition("", [comp0 + comp1 * d for d in ds], xs, busy)
    extra = [Condition(name, [k * (comp0 + comp1 * d) for d in ds], [], busy) for name, k in margins]
    steps = [nominal.step_time_s(j, d) for j, d in enumerate(ds)]
    return Shape(key=f"t8 {arch.rails_per_node} rails", perf=arch.perf,
                 layout_shape=LayoutShape(tp=8, cp=1, pp=1, vp=1, microbatch_size=1), gpus_per_domain_used=8,
                 d_values=ds, domains=list(ds), conditions=[nominal, *extra], mem=[mem0 + mem1 * d for d in ds],
                 hbm_usable_gb=hbm, step_time_s=steps)


def solve(shapes: list[Shape], archs: list[Architecture], target_s: float, **scenario):
    sc = make_scenario(target={"step_time_s": target_s}, **scenario)
    space = DesignSpace(sc, CATALOG, target_s, archs, shapes, combinations=0, pruned={})
    model = build_model(model_data(space))
    outcome = HighsAdapter().solve(model)
    return model, outcome


def test_step_time_picks_the_smallest_d_that_meets_the_target():
    # d·T = 12 (T = 12/d s); target 5 s → d ≥ 2.4 → d = 4 of {1, 2, 4, 8}: 4 nodes.
    # capex: 4 nodes $1,200,000 + 4 NICs $6,000 + 1 switch (4 nodes ≤ 64 ports, 1 tier) $30,000
    #   + node–leaf: 4 cables $200 + ⌈4/2⌉ = 2 switch-end modules $2,000 + 4 NIC-end modules $2,400
    #   + 1 compute rack (4 nodes per rack) $5,000 + 1 network rack $5,000 = $1,250,600.
    model, outcome = solve([shape(ONE_RAIL, [1, 2, 4, 8], comp0=12)], [ONE_RAIL], 5.0)
    assert outcome.status == "optimal"
    choice = decode(model)
    assert (choice.d, choice.tiers) == (4, 1)
    assert choice.capex_usd == pytest.approx(1_250_600)


def test_exposure_pieces_are_a_maximum_of_affine_functions():
    # Exposed time E(d) = max(0, 2 − 4/d, 1.5 − 1/d) (pieces d·E = −4 + 2d and −1 + 1.5d); T = 12/d + E(d).
    # d = 2: 6 + max(0, 0, 1) = 7 > 5.4;  d = 4: 3 + max(0, 1, 1.25) = 4.25 ≤ 5.4 → d = 4.
    x = ("dp", [(-4.0, 2.0), (-1.0, 1.5)])
    model, outcome = solve([shape(ONE_RAIL, [2, 4], comp0=12, exposures=[x])], [ONE_RAIL], 5.4)
    assert decode(model).d == 4
    # the exposure rows hold at the chosen d: exposed ≥ both pieces (d·E = 4 and 5)
    assert pyo.value(model.step.exposed[0, 0, 0]) >= 5.0 - 1e-6  # shape 0, nominal condition, its first class
    # with a 4.2 s target the 5.0 s of d·E at d = 4 no longer fits: 3 + 1.25 = 4.25 > 4.2 → infeasible
    _, outcome = solve([shape(ONE_RAIL, [2, 4], comp0=12, exposures=[x])], [ONE_RAIL], 4.2)
    assert outcome.status == "infeasible"


def test_link_capacity_binds_when_a_link_is_busier_than_the_schedule():
    # compute alone: T = 4/d meets 5 s at d = 1; but every class shares the NIC: busy time 6/d + 2 s
    # (d·busy = 6 + 2d), so d = 1 needs 8 s and d = 2 exactly 5 s: link_capacity picks d = 2.
    model, _ = solve([shape(ONE_RAIL, [1, 2, 4], comp0=4, capacity=(6, 2))], [ONE_RAIL], 5.0)
    assert decode(model).d == 2
    model, _ = solve([shape(ONE_RAIL, [1, 2, 4], comp0=4)], [ONE_RAIL], 5.0)
    assert decode(model).d == 1


def test_compute_margin_rows_demand_the_slowdown_too():
    # d·T = 4.8 (T = 4.8/d) meets 5 s at d = 1; with a 10 % compute slowdown demanded, 1.1·4.8 = 5.28 s > 5 s, so
    # step_time_compute_margin moves the design to d = 2 (2.64 s).
    model, _ = solve([shape(ONE_RAIL, [1, 2, 4], comp0=4.8, margins=[("compute_margin", 1.1)])], [ONE_RAIL], 5.0)
    assert decode(model).d == 2
    assert hasattr(model.step, "step_time_compute_margin")


def test_memory_fit_excludes_small_d():
    # memory per GPU = 100 + 200/d GB (d·mem = 200 + 100·d) against 150 GB usable → d ≥ 4, although
    # the step time (T = 4/d) would allow d = 1 at a 5 s target.
    model, _ = solve([shape(ONE_RAIL, [1, 2, 4], comp0=4, mem0=200, mem1=100, hbm=150)], [ONE_RAIL], 5.0)
    assert decode(model).d == 4


def test_one_design_chooses_the_cheaper_architecture():
    # 1 rail needs d = 4 (T = 12/d ≤ 5): $1,250,600 (first test).
    # 2 rails are faster (T = 8/d) and need d = 2: 2 nodes $600,000 + 4 NICs $6,000 + 1 switch (2 rail
    #   groups of 2 nodes fit one 64-port switch) $30,000 + 4 cables $200 + 2 switch-end modules $2,000
    #   + 4 NIC-end modules $2,400 + 1 compute rack $5,000 + 1 network rack $5,000 = $650,600.
    shapes = [shape(ONE_RAIL, [1, 2, 4, 8], comp0=12), shape(TWO_RAILS, [1, 2, 4, 8], comp0=8)]
    model, _ = solve(shapes, [ONE_RAIL, TWO_RAILS], 5.0)
    choice = decode(model)
    assert model.data.archs[choice.arch_index].arch == TWO_RAILS
    assert (choice.d, round(choice.capex_usd, 2)) == (2, 650_600)


def test_spares_add_whole_units():
    # d = 4 → 4 units; spare fraction 0.25 → ⌈1.0⌉ = 1 spare node: 5 nodes $1,500,000, 5 NICs $7,500,
    # 1 switch $30,000, 5 cables $250, ⌈5/2⌉ = 3 switch-end modules $3,000, 5 NIC-end $3,000,
    # ⌈5/4⌉ = 2 compute racks $10,000, 1 network rack $5,000 = $1,558,750.
    model, _ = solve([shape(ONE_RAIL, [4], comp0=12)], [ONE_RAIL], 5.0, constraints={"spare_nodes_fraction": 0.25})
    assert pyo.value(model.spare_units[0]) == pytest.approx(1)
    assert decode(model).capex_usd == pytest.approx(1_558_750)


def test_fewest_tiers_and_two_tier_striping():
    # 72 nodes × 1 rail > 64 ports → 2 tiers. k_down = k_up = 32: leaves = ⌈72/32⌉ = 3; spines =
    # smallest divisor of 32 ≥ ⌈3·32/64⌉ = 2 → 2; leaf–spine links = 3·32 = 96.
    model, _ = solve([shape(ONE_RAIL, [72], comp0=12)], [ONE_RAIL], 5.0)
    assert decode(model).tiers == 2
    switches = {role: pyo.value(n) for role, n in model.switches[0].items()}
    assert switches == {"leaf": 3, "spine": 2, "core": 0}
    assert pyo.value(model.links[0]["leaf_spine"]) == 96


def test_three_tier_ports():
    # 2,100 nodes × 1 rail > 2-tier capacity ⌊64/1⌋·32 = 2,048 → 3 tiers: leaves = ⌈2100/32⌉ = 66,
    # pods = ⌈66/32⌉ = 3, spines = 3·32 = 96, cores per plane = smallest divisor of 32 ≥ ⌈3/2⌉ = 2 →
    # cores = 32·2 = 64.
    model, _ = solve([shape(ONE_RAIL, [2100], comp0=12)], [ONE_RAIL], 5.0)
    assert decode(model).tiers == 3
    switches = {role: pyo.value(n) for role, n in model.switches[0].items()}
    assert switches == {"leaf": 66, "spine": 96, "core": 64}


def test_link_modules_and_network_racks_are_whole():
    # 3 nodes × 2 rails = 6 node–leaf links: 3 twin-port switch-end modules, 6 NIC-end modules;
    # 1 switch of 1 RU / 1 kW → 1 network rack.
    model, _ = solve([shape(TWO_RAILS, [3], comp0=12)], [TWO_RAILS], 5.0)
    assert pyo.value(model.modules[0, "node_leaf", "switch"]) == 3
    assert pyo.value(model.modules[0, "node_leaf", "far"]) == 6
    assert pyo.value(model.network_racks[0]) == 1


def test_budget_cap_makes_the_model_infeasible_below_the_cheapest_design():
    # The only design costs $1,250,600 (first test); a $1,250,000 budget leaves nothing.
    _, outcome = solve([shape(ONE_RAIL, [4, 8], comp0=12)], [ONE_RAIL], 5.0, constraints={"budget_usd": 1_250_000})
    assert outcome.status == "infeasible"
    _, outcome = solve([shape(ONE_RAIL, [4, 8], comp0=12)], [ONE_RAIL], 5.0, constraints={"budget_usd": 1_250_600})
    assert outcome.status == "optimal"


def test_max_gpus_cap():
    # d = 4 needs 32 GPUs; max_gpus = 31 → infeasible; 32 → feasible.
    _, outcome = solve([shape(ONE_RAIL, [4], comp0=12)], [ONE_RAIL], 5.0, constraints={"max_gpus": 31})
    assert outcome.status == "infeasible"
    _, outcome = solve([shape(ONE_RAIL, [4], comp0=12)], [ONE_RAIL], 5.0, constraints={"max_gpus": 32})
    assert outcome.status == "optimal"


def test_pinned_node_count_is_built_even_when_fewer_would_do():
    # T = 12/d ≤ 5 allows d = 4; pin.nodes = 8 forces d = 8.
    model, _ = solve([shape(ONE_RAIL, [4, 8], comp0=12)], [ONE_RAIL], 5.0, pin={"nodes": 8})
    assert decode(model).d == 8


def test_tco_objective_adds_energy():
    # d = 4 design (first test): IT power = 4 nodes·10 kW + 4 NICs·20 W + 1 switch·1 kW
    #   + 2 switch-end modules·15 W + 4 NIC-end modules·8 W = 40 + 0.08 + 1 + 0.03 + 0.032 = 41.142 kW;
    #   facility = 1.25·41.142 = 51.4275 kW; 5 years·8,760 h·51.4275 kW·$0.10 = $225,252.45;
    #   TCO = 1,250,600 + 225,252.45 = $1,475,852.45.
    model, _ = solve([shape(ONE_RAIL, [4], comp0=12)], [ONE_RAIL], 5.0, objective="tco")
    assert decode(model).objective_usd == pytest.approx(1_475_852.45, abs=0.01)


# ------------------------------------------------------------------ link_modules: continuous where always whole


def test_whole_modules_by_hand():
    """`_whole_modules`: links ÷ links per module is whole at every integer point when every coefficient (and the
    constant) of the link count divides by it, and every variable of it is integer."""
    import pyomo.core as pyo

    from solver.optimize.model import _whole_modules

    m = pyo.ConcreteModel()
    m.n = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.k = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.r = pyo.Var(domain=pyo.NonNegativeReals)
    assert _whole_modules(8 * m.n, 2)  # 8 NICs per node, twin-port: 4·nodes modules
    assert _whole_modules(8 * m.n + 4 * m.k, 4)
    assert not _whole_modules(1 * m.n, 2)  # one rail, twin-port: ⌈nodes/2⌉ needs an integer count
    assert not _whole_modules(6 * m.n + 3 * m.k, 2)
    assert not _whole_modules(2 * m.r, 2)  # a continuous variable: nothing is known
    assert _whole_modules(m.n, 1)
    assert _whole_modules(0, 2) and not _whole_modules(3, 2)
