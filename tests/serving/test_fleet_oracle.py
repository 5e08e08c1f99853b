"""The fleet MILP equals the exhaustive enumeration of the same (unpruned) fleet space (SPEC §7, §10): the optimum
and the K best distinct fleets, for capex, TCO and fastest, aggregated, disaggregated and auto, with caps and with
platforms per pool forced equal. HiGHS solves the real model."""
from __future__ import annotations

import pytest

import solver
from solver.design_space.serving import build_fleet_space
from solver.optimize.serving_oracle import enumerate_best
from solver.optimize.serving_solve import caps_of, k_best

from .fleet_scenarios import scenario

CASES = {
    "auto-capex": {},
    "aggregated-only": {"serving.disaggregation": "off"},
    "disaggregated-only": {"serving.disaggregation": "on"},
    "tco": {"objective": "tco"},
    "same-platform": {"serving.disaggregation": "on", "serving.platforms_per_pool": "same"},
    "fastest-budget": {"objective": "fastest", "constraints.budget_usd": 2_000_000.0,
                       "serving.slo.tokens_per_s_per_user": None},
    "fastest-gpus": {"objective": "fastest", "constraints.max_gpus": 16},
    "gpu-cap": {"constraints.max_gpus": 16},
    "tight-ttft": {"serving.slo.ttft_p90_s": 0.5, "serving.traffic.requests_per_s": 40.0},
}


@pytest.fixture(scope="module")
def catalog():
    return solver.load_catalog()


@pytest.mark.parametrize("name", sorted(CASES) + ["by-platform"])
def test_milp_k_best_equals_enumeration(name, catalog):
    by = "platform" if name == "by-platform" else "architecture"
    sc = solver.load_scenario(scenario(**CASES.get(name, {}))).scenario
    full = build_fleet_space(sc, catalog, prune=False)
    expected = enumerate_best(full, caps_of(sc), sc.objective, sc.top_k, by)
    got = k_best(sc, build_fleet_space(sc, catalog), sc.top_k, by)
    assert len(got) == len(expected), name
    assert got, f"{name}: the case must have a fleet to compare"
    for d, (cost, tpot, _) in zip(got, expected):
        mine = d.tco_usd if sc.objective == "tco" else d.capex_usd
        assert mine == pytest.approx(cost, rel=1e-9), name
        if sc.objective == "fastest":
            assert d.tpot_s == pytest.approx(tpot, rel=1e-9), name


def test_the_enumeration_can_disagree():
    """The comparison can fail: the enumeration's second-best distinct fleet costs more than its best (so a MILP
    returning the best twice, or skipping one, is caught)."""
    cat = solver.load_catalog()
    sc = solver.load_scenario(scenario()).scenario
    best = enumerate_best(build_fleet_space(sc, cat, prune=False), caps_of(sc), "capex", 3)
    assert len(best) == 3 and best[0][0] <= best[1][0] <= best[2][0]
    assert len({tuple(p[0].machine.key for p in row[2]) + (len(row[2]),) for row in best}) >= 2


def test_designs_meet_every_row(catalog):
    """Every reported fleet serves the peak at ≤ utilisation_max, meets TTFT p90 and TPOT, and its pools' costs are
    the costing table's for their domains (costing.design_cost, the fabric sized for the pool's nodes)."""
    from solver import costing

    sc = solver.load_scenario(scenario(**{"serving.disaggregation": "on", "top_k": 6})).scenario
    for d in k_best(sc, build_fleet_space(sc, catalog), 6):
        # kv_path: the KV cache crosses between the pools, so they share one network technology
        assert len({p.option.machine.network for p in d.pools}) == 1
        for p in d.pools:
            perf = p.option.perf
            assert p.replicas * perf.requests_per_s * 0.8 >= 20.0 * (1 - 1e-9)
            if p.role != "decode":
                assert p.ttft_s <= 2.0
            if p.role != "prefill":
                assert perf.tpot_s <= 1 / 20.0
            m = p.option.machine
            again = costing.design_cost(sc, catalog, m.platform, m.nic, m.rails_per_node, m.switch, 1.0,
                                        p.option.domains(p.replicas),
                                        gpus_per_domain_used=p.option.used_per_domain(p.replicas))
            assert again is not None and again.capex_usd == pytest.approx(p.cost.capex_usd)
            # domains hold whole replicas: tp=g GPUs per replica on 8-GPU HGX → ⌈r / ⌊8/g⌋⌉ nodes (the job's units;
            # the catalog's availability rule adds spare nodes on top, costing.spare_units_for)
            g = p.option.gpus_per_replica
            assert p.cost.units == -(-p.replicas // (8 // g))
            assert p.cost.nodes == p.cost.units + p.cost.spare_units


def test_gpus_used_per_domain():
    """G_u of r replicas of g GPUs on D-GPU domains, by hand: 16-GPU replicas on NVL72 use 64 of 72 (4 per rack);
    one 16-GPU replica uses 16; 2 replicas of 4 on an HGX use 8; a 16-GPU replica over two 8-GPU domains uses 8 of each;
    a 12-GPU replica over two 8-GPU domains uses 6 of each."""
    from solver.design_space.serving import PoolOption

    def opt(g, d):
        return PoolOption(0, "decode", None, None, None, g, d)

    assert opt(16, 72).used_per_domain(8) == 64 and opt(16, 72).domains(8) == 2
    assert opt(16, 72).used_per_domain(1) == 16
    assert opt(4, 8).used_per_domain(2) == 8
    assert opt(16, 8).used_per_domain(3) == 8 and opt(16, 8).domains(3) == 6
    assert opt(12, 8).used_per_domain(1) == 6
