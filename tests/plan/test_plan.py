"""Multi-period purchase plans (issue 16, SPEC §6.1): HiGHS solves the real plan MILP; the result is
checked against hand-worked toy plans, against the exhaustive enumeration of plans
(`solver.plan.oracle`: every sequence of per-period designs, priced by the ledger) and, for one
period without inventory, against today's `solve` to the cent.

Toy catalog (tests/data/toy-catalog.yaml, worked out in tests/optimize/test_optimizer.py): one GPU
per node, free links and racks, one $1,000 switch (category switch) for ≤ 64 nodes, PUE 1.0,
$0.10/kWh. At a 4 ms step a 1-TFLOP/s box needs d = 32 nodes and fast-box d = 8; at 2 ms
(T_comp halves) they need 103.079/2 = 51.5 → 64 and 25.77/2 = 12.9 → 16 (d divides B = 64).
    slow-box  $10,000 1 kW     cheap-box $5,000 2 kW     fast-box $30,000 5 kW
"""
from __future__ import annotations

import copy

import pytest
from conftest import DATA, GPT3_1_3B

import solver
from solver.api import solve
from solver.inputs import default_catalog_path
from solver.plan.oracle import enumerate_plans
from solver.plan.periods import plan_periods
from solver.plan.run import run_plan, solve_plan

TOY = dict(name="toy-plan", workload=dict(model=dict(layers=1, hidden_size=256, ffn_hidden_size=256, ffn_type="gelu",
                                                     attention_heads=1, vocab_size=2048, seq_len=256),
                                          global_batch_size=64, activation_recompute="none"),
           target=dict(step_time_s=0.004), overlap=dict(tp=1, cp=1, pp=1, dp=1),
           parallelism=dict(tp=1, cp=1, pp=1, vp=1, microbatch_size=1))
TWO_PERIODS = [{"set": {"target.step_time_s": 0.004}}, {"set": {"target.step_time_s": 0.002}}]


@pytest.fixture(scope="module")
def toy_catalog():
    return solver.load_catalog([DATA / "toy-catalog.yaml"])


@pytest.fixture(scope="module")
def small_switch_catalog():
    return solver.load_catalog([default_catalog_path(), DATA / "small-switch-overlay.yaml"])


def _spec(doc: dict, catalog):
    return plan_periods(solver.load_scenario(copy.deepcopy(doc)), catalog)


def _toy(plan: dict, **extra) -> dict:
    return {**copy.deepcopy(TOY), **extra, "plan": plan}


def _run(doc, catalog):
    out = solve_plan(_spec(doc, catalog), catalog)
    assert out.status == "optimal"
    return out


def _what(out) -> list[tuple]:
    return [(d.architecture.platform, d.layout.dp, c) for d, c in zip(out.designs, out.clusters)]


def _bought(out, key: str) -> list[int]:
    return [sum(x.quantity for x in ps.purchases if x.key == key) for ps in out.ledger.periods]


# ------------------------------------------------------------------------------ hand-worked plans


def test_hardware_is_carried_forward(toy_catalog):
    """keep_one, 4 ms then 2 ms, no discount: cheap-box buys 32 nodes + the switch ($161,000), then only
    the 32 more it needs ($160,000): $321,000. From scratch the second period would buy 64 nodes."""
    out = _run(_toy({"periods": TWO_PERIODS}), toy_catalog)
    assert _what(out) == [("cheap-box", 32, 1), ("cheap-box", 64, 1)]
    assert _bought(out, "cheap-box") == [32, 32]
    assert _bought(out, "toy-switch") == [1, 0]
    assert [round(ps.capex_usd, 2) for ps in out.ledger.periods] == [161_000, 160_000]
    assert out.ledger.objective_usd == pytest.approx(321_000)
    assert [ps.gpus_owned for ps in out.ledger.periods] == [32, 64]


def test_discount_and_falling_prices(toy_catalog):
    """Compute −50 % a year and 10 % discount: period 1 pays 32 · 5,000 · 0.5 = 80,000, weighed
    1/1.1: 161,000 + 72,727.27 = 233,727.27 (fast-box: 241,000 + 8·30,000·0.5/1.1 = 350,090.91)."""
    out = _run(_toy({"periods": TWO_PERIODS, "price_change_per_year": {"compute": -0.5}, "discount_rate": 0.1}),
               toy_catalog)
    assert _what(out)[1][0] == "cheap-box"
    assert [ps.discount_factor for ps in out.ledger.periods] == pytest.approx([1, 1 / 1.1])
    assert out.ledger.periods[1].capex_usd == pytest.approx(80_000)
    assert out.ledger.objective_usd == pytest.approx(161_000 + 80_000 / 1.1)


def test_rising_prices_buy_ahead(toy_catalog):
    """Compute +100 % in period 1: buying all 64 cheap-boxes in period 0 (64·5,000 + 1,000 = $321,000)
    beats 161,000 + 32·10,000 = $481,000; the 32 bought early sit idle in period 0."""
    out = _run(_toy({"periods": TWO_PERIODS, "price_change_per_year": {"compute": 1.0}}), toy_catalog)
    assert _bought(out, "cheap-box") == [64, 0]
    assert out.ledger.objective_usd == pytest.approx(321_000)
    report = run_plan(solver.load_scenario(_toy({"periods": TWO_PERIODS, "price_change_per_year": {"compute": 1.0}})),
                      toy_catalog, compare=False).to_dict()
    idle = report["periods"][0]["idle"]
    assert [(x["part"], x["idle"], x["value_usd"]) for x in idle] == [("cheap-box", 32, 160_000)]
    owned = {x["key"]: x["units"] for x in report["periods"][0]["owned"]}
    assert owned == {"cheap-box": 64, "toy-switch": 1}  # links and racks are free in the toy catalog


def test_allow_second_moves_to_a_new_architecture(toy_catalog):
    """Period 1 caps GPUs at 16: only fast-box d = 16 meets 2 ms. keep_one must run fast-box from the
    start: 241,000 + 8 · 30,000 · 0.2 = $289,000 (compute at 0.2 in period 1). allow_second keeps the
    cheap-box cluster of period 0 ($161,000) and builds a fast-box cluster: 16 · 6,000 + 1,000 =
    $97,000 → $258,000; the cheap-box cluster stays, available for other work."""
    periods = [{"set": {"target.step_time_s": 0.004}},
               {"set": {"target.step_time_s": 0.002, "constraints.max_gpus": 16}, "price_factors": {"compute": 0.2}}]
    keep = _run(_toy({"periods": periods}), toy_catalog)
    assert _what(keep) == [("fast-box", 8, 1), ("fast-box", 16, 1)]
    assert keep.ledger.objective_usd == pytest.approx(289_000)
    doc = _toy({"periods": periods, "architectures": "allow_second"})
    move = _run(doc, toy_catalog)
    assert _what(move) == [("cheap-box", 32, 1), ("fast-box", 16, 2)]
    assert move.ledger.objective_usd == pytest.approx(258_000)
    clusters = run_plan(solver.load_scenario(doc), toy_catalog, compare=False).to_dict()["periods"][1]["clusters"]
    assert [(c["cluster"], c["role"], c["gpus_held"]) for c in clusters] == [
        (1, "available for other work", 32), (2, "running the job", 16)]


def test_owned_inventory_belongs_to_the_first_cluster(toy_catalog):
    """40 cheap-boxes owned: period 0 buys only the switch ($1,000), period 1 the 64 − 40 = 24 nodes it
    lacks ($120,000); 8 owned boxes sit idle in period 0."""
    out = _run(_toy({"periods": TWO_PERIODS}, inventory={"cheap-box": 40}), toy_catalog)
    assert _bought(out, "cheap-box") == [0, 24]
    assert out.ledger.objective_usd == pytest.approx(121_000)
    assert [ps.gpus_owned for ps in out.ledger.periods] == [40, 64]


def test_tco_pays_each_period_of_energy(toy_catalog):
    """TCO, one-year periods, 8,760 h · kW · $0.10 (PUE 1.0): cheap-box 64 kW then 128 kW →
    56,064 + 112,128; with capex 321,000: $489,192. fast-box: 481,000 + 35,040 + 70,080 = $586,120;
    slow-box: 641,000 + 28,032 + 56,064 = $725,096."""
    out = _run(_toy({"periods": TWO_PERIODS}, objective="tco"), toy_catalog)
    assert _what(out)[0][0] == "cheap-box"
    assert [ps.energy_usd for ps in out.ledger.periods] == pytest.approx([56_064, 112_128])
    assert out.ledger.objective_usd == pytest.approx(489_192)


def test_comparisons_from_scratch_and_up_front(toy_catalog):
    """From scratch: 161,000 + (64 · 5,000 + 1,000) = $482,000. Up front: everything in period 0 for
    one architecture running both periods: 64 cheap-boxes + switch = $321,000."""
    report = run_plan(solver.load_scenario(_toy({"periods": TWO_PERIODS})), toy_catalog).to_dict()
    scratch = report["comparison"]["from_scratch"]
    assert [round(p["capex_usd"]) for p in scratch["periods"]] == [161_000, 321_000]
    assert scratch["discounted_usd"] == pytest.approx(482_000)
    up = report["comparison"]["up_front"]
    assert (up["status"], round(up["discounted_usd"])) == ("optimal", 321_000)
    assert report["totals"]["discounted_usd"] == pytest.approx(321_000)


# ------------------------------------------------------------------------------ exactness

# target 1.3 s (0.5 s under the v1 step model): physics v2 times GPT-3 1.3B slower on few NICs, and
# the enumeration must still offer several plans to choose from in every case below
REAL = dict(name="plan-exact", workload=dict(model=GPT3_1_3B, global_batch_size=256), target=dict(step_time_s=1.3),
            constraints=dict(platforms=["hgx-h100", "hgx-b200"], rails_per_node=[1], nic_configurations="any", nics=["cx7-ndr"],
                             switches=["ndr-8port"]),
            parallelism=dict(tp=[8], cp=1, pp=1, vp=1, microbatch_size=1))
GROWING = [{"set": {"workload.global_batch_size": 256, "constraints.max_gpus": 96}},
           {"set": {"workload.global_batch_size": 512, "constraints.max_gpus": 160},
            "price_factors": {"compute": 0.7, "link": 1.2}},
           {"set": {"workload.global_batch_size": 1024, "constraints.max_gpus": 320}, "price_factors": {"compute": 0.5}}]
EXACT = {
    # 1 → 2 fabric tiers on the 8-port switch (more than 8 nodes in the last period)
    "tiers-allow-second": (dict(plan={"periods": GROWING, "discount_rate": 0.05, "architectures": "allow_second"}), {}),
    "tiers-tco-owned": (dict(plan={"periods": GROWING, "discount_rate": 0.05}, objective="tco",
                             inventory={"hgx-h100": 3, "ndr-8port": 1}), {}),
    "dearer-network": (dict(plan={"periods": GROWING, "price_change_per_year": {"switch": 1.0, "link": 0.5},
                                  "architectures": "allow_second"}, inventory={"hgx-b200": 2}), {}),
    "more-layouts-qm9700": (dict(plan={"periods": GROWING, "discount_rate": 0.08,
                                       "price_change_per_year": {"compute": -0.3}}),
                            dict(parallelism=dict(tp=[4, 8], cp=1, pp=1, vp=1, microbatch_size=1),
                                 constraints=dict(platforms=["hgx-h100", "hgx-b200"], rails_per_node=[1, 8], nic_configurations="any",
                                                  nics=["cx7-ndr"], switches=["qm9700"]))),
}


@pytest.mark.parametrize("case", list(EXACT))
def test_plan_equals_exhaustive_enumeration_of_plans(case, small_switch_catalog):
    extra, replace = EXACT[case]
    doc = {**copy.deepcopy(REAL), **copy.deepcopy(extra), **copy.deepcopy(replace)}
    spec = _spec(doc, small_switch_catalog)
    plans = enumerate_plans(spec, small_switch_catalog)
    assert len(plans) >= 9, "the space must offer plans to choose from"
    out = solve_plan(spec, small_switch_catalog)
    assert out.status == "optimal"
    assert round(out.ledger.objective_usd, 2) == plans[0][0]


@pytest.mark.parametrize("case", ["tiers-allow-second", "dearer-network"])
def test_up_front_plan_equals_enumeration(case, small_switch_catalog):
    """Everything bought in period 0, one architecture: the cheapest such plan, enumerated the same way."""
    extra, _ = EXACT[case]
    doc = {**copy.deepcopy(REAL), **copy.deepcopy(extra)}
    spec = _spec(doc, small_switch_catalog)
    spec = spec.only(spec.periods, "keep_one")
    out = solve_plan(spec, small_switch_catalog, first_period_only=True)
    assert round(out.ledger.objective_usd, 2) == enumerate_plans(spec, small_switch_catalog, first_period_only=True)[0][0]
    assert all(not ps.purchases for ps in out.ledger.periods[1:])


def test_toy_plans_equal_enumeration(toy_catalog):
    """Three periods, step target shrinking 0.7× a period, TCO, allow_second, prices moving both ways."""
    doc = _toy({"periods": 3, "growth": [{"path": "target.step_time_s", "factor": 0.7}], "discount_rate": 0.1,
                "price_change_per_year": {"compute": -0.3, "switch": 0.5}, "architectures": "allow_second"},
               objective="tco", inventory={"slow-box": 20})
    spec = _spec(doc, toy_catalog)
    assert round(_run(doc, toy_catalog).ledger.objective_usd, 2) == enumerate_plans(spec, toy_catalog)[0][0]


@pytest.mark.parametrize("objective", ["capex", "tco"])
def test_one_period_without_inventory_equals_todays_solve(objective, small_switch_catalog):
    """One period, no inventory: the plan's spend is the best design's objective to the cent (for TCO
    with a period as long as tco.years, so the energy covers the same years)."""
    doc = {**copy.deepcopy(REAL), "objective": objective,
           "plan": {"periods": 1, "period_years": 5.0}, "constraints": {**REAL["constraints"], "max_gpus": 160}}
    best = solve(solver.load_scenario(doc), small_switch_catalog, top_k=1).designs[0]
    out = _run(doc, small_switch_catalog)
    assert round(out.ledger.objective_usd, 2) == round(best.objective_usd, 2)
    assert out.designs[0].identity == best.identity


def test_budget_per_period_spreads_the_purchases(toy_catalog):
    """$170,000 a period; 4 ms, 4 ms, then 2 ms; compute at 1.0, 1.5, 1.2 (5,000, 7,500, 6,000 a
    cheap-box). Unconstrained, all 64 boxes would be bought in period 0 ($321,000). With the cap:
    period 0 buys the 32 it runs, the switch and one more box (161,000 + 5,000 = $166,000), period 2
    as many as fit (⌊170,000 / 6,000⌋ = 28, $168,000), period 1 the 3 left (3 · 7,500 = $22,500):
    $356,500. (fast-box's 8 · 30,000 + 1,000 = $241,000 and slow-box's $321,000 break the cap.)"""
    periods = [{"set": {"target.step_time_s": 0.004}},
               {"set": {"target.step_time_s": 0.004}, "price_factors": {"compute": 1.5}},
               {"set": {"target.step_time_s": 0.002}, "price_factors": {"compute": 1.2}}]
    doc = _toy({"periods": periods}, constraints={"budget_usd": 170_000})
    out = _run(doc, toy_catalog)
    assert _bought(out, "cheap-box") == [33, 3, 28]
    assert [round(ps.capex_usd) for ps in out.ledger.periods] == [166_000, 22_500, 168_000]
    assert out.ledger.objective_usd == pytest.approx(356_500)
    with pytest.raises(ValueError, match="without budget_usd"):
        enumerate_plans(_spec(doc, toy_catalog), toy_catalog)


# ------------------------------------------------------------------------- comparisons near the time limit


def test_a_comparison_left_less_time_than_its_build_took_is_not_computed(toy_catalog):
    # `solves`: a comparison. With nothing left of the limit (a Deadline of 0 s), loading its model into HiGHS
    # could not end within it: not computed, with the reason. Without a limit it is solved as without `solves`.
    from solver.deadline import NO_LIMIT, Deadline
    from solver.plan.run import period_models

    spec = _spec(_toy({"periods": TWO_PERIODS}), toy_catalog)
    models = period_models(spec, toy_catalog)
    late = solve_plan(spec, toy_catalog, models=models, deadline=Deadline(0.0), solves=1)
    assert late.status == "not computed" and late.designs == []
    assert late.explanation == "not computed: the 0 s time limit ran out"
    plain = solve_plan(spec, toy_catalog, models=models)
    free = solve_plan(spec, toy_catalog, models=models, deadline=NO_LIMIT, solves=3)
    assert free.status == plain.status == "optimal"
    assert _what(free) == _what(plain) and free.ledger.capex_usd == plain.ledger.capex_usd


def test_the_manual_schedule_is_not_computed_once_the_limit_is_used_up(toy_catalog):
    from solver.deadline import Deadline
    from solver.plan.run import _manual

    spec = _spec(_toy({"periods": TWO_PERIODS}), toy_catalog)
    scratch = [solve_plan(spec.only([p], "keep_one"), toy_catalog) for p in spec.periods]
    out = _manual(spec, toy_catalog, scratch, None, Deadline(0.0))
    assert out is not None and out.status == "not computed" and out.ledger is None
    solved = _manual(spec, toy_catalog, scratch, None, Deadline(None))
    assert solved is not None and solved.status == "optimal" and solved.designs
