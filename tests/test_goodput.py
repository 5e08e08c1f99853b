"""Goodput: failures, checkpoints, spares and blast radius (issue 25, SPEC §6.2, docs/model.md "Goodput").

Inputs and checks (docs/model.md "Goodput: inputs and checks"): the catalog's failure rates are derived from
the Llama 3 405B interruption breakdown (arXiv:2407.21783 §3.3.4 Table 5, docs/sources.md [G1]), so the
Llama 3 interruption count below checks the part counts and the blast radius the model derives from the
pinned design (its fabric, switches, links, NICs), NOT the rates; the effective training time also rests on
the checkpoint size, the write bandwidth and the restart time (inputs, not fitted). The Kokolis et al. check
takes its rate from the same paper's 8-GPU job MTTF and tests the scaling to 1,024 GPUs.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from conftest import GPT3_1_3B, REPO, enumerated_designs

import solver
from solver.design_space import Architecture
from solver.failures import SpareRule, spare_rule, spare_units
from solver.optimize import oracle
from solver.perf import goodput as g
from solver.perf.layout import Layout
from solver.results import make_design

LLAMA3_405B = dict(layers=126, hidden_size=16384, ffn_hidden_size=53248, ffn_type="swiglu", attention_heads=128,
                   kv_heads=8, vocab_size=128256, seq_len=8192, tied_embeddings=False)


def _scenario(**over):
    doc = {"name": "goodput", "workload": {"model": GPT3_1_3B, "global_batch_size": 512},
           "target": {"step_time_s": 100.0}}
    for key, value in over.items():
        doc[key] = value
    return solver.load_scenario(copy.deepcopy(doc)).scenario


# ------------------------------------------------------------------------------ the formulas


def test_young_daly_and_goodput_by_hand():
    # δ = 30 s, M = 2 h, R = 600 s: τ = √(2·30·7,200) = √432,000 = 657.27 s;
    # lost = 30/657.27 + (328.63 + 600)/7,200 = 0.045644 + 0.128976 = 0.174620 → goodput 0.825380
    assert g.young_daly_interval_s(30.0, 2.0) == pytest.approx(657.267, rel=1e-5)
    assert g.goodput(30.0, 2.0, 600.0) == pytest.approx(0.825380, rel=1e-5)
    # arrays (the design space may evaluate every d at once): the same numbers element-wise
    arr = g.goodput(np.array([30.0, 30.0]), np.array([2.0, np.inf]), 600.0)
    assert arr[0] == pytest.approx(0.825380, rel=1e-5) and arr[1] == 1.0
    # a job that fails faster than it can restart makes no progress
    assert g.goodput(30.0, 0.1, 600.0) == 0.0


def test_poisson_quantile_by_hand():
    # Poisson(1.0859): P0 = e^−1.0859 = 0.33762, P1 = 0.36662, P2 = 0.19906, P3 = 0.07205, P4 = 0.01956:
    # CDF 0.3376, 0.7042, 0.9033, 0.9753, 0.9949 → the 99 % quantile is 4
    assert g.poisson_quantile(1.0859, 0.99) == 4
    assert g.poisson_quantile(0.0, 0.99) == 0
    assert float(g.poisson_tail(0.5, 0)) == pytest.approx(1 - math.exp(-0.5))


# ------------------------------------------------------------------------------ spares


def test_hgx_spares_by_hand(default_catalog):
    # λ_node = 8 · 0.1106 + 0.1518 = 1.0366 per year (catalog gpu, node); over 72 h: 1.0366·72/8,760 = 0.0085200;
    # q = 1 − e^−0.00852 = 0.0084838; 128 nodes: mean 128·0.0084838 = 1.08593 → 99 % quantile 4 (above)
    rule = spare_rule(_scenario(), default_catalog)
    hgx = default_catalog.by_id("platforms")["hgx-h100"]
    assert spare_units(hgx, 128, None, rule) == 4
    # the fraction rule still sets a floor: ⌈0.05 · 128⌉ = 7 > 4
    assert spare_units(hgx, 128, None, SpareRule(0.05, rule.availability, rule.repair_h, rule.gpu_per_h,
                                                 rule.node_per_h)) == 7


def test_nvl72_in_domain_spares(default_catalog):
    # GB200 NVL72: a tray is lost at λ = 4 · 0.1106 + 0.1518 = 0.5942 per year; over 72 h a rack of 18 trays
    # expects m = 18 · 0.5942 · 72 / 8,760 = 0.087910 failures.
    # 72 of 72 GPUs used: a rack is down at its first failure, q = 1 − e^−m = 0.084157; 455 racks: mean 38.29,
    # 99 % quantile ≈ 38.3 + 2.33·√38.3 ≈ 52.7 → between 50 and 56 spare racks.
    # 64 of 72 used: 2 spare trays per rack, q = P(Poisson(m) > 2) ≈ m³/6 · e^−m ≈ 1.036e-4; 512 racks: mean
    # 0.0530, P(0) = 0.948 < 0.99 ≤ P(≤ 1) = 0.9986 → 1 spare rack.
    rule = spare_rule(_scenario(), default_catalog)
    nvl = default_catalog.by_id("platforms")["gb200-nvl72"]
    assert 50 <= spare_units(nvl, 455, 72, rule) <= 56
    assert spare_units(nvl, 512, 64, rule) == 1


def test_spares_off_and_without_failure_data(default_catalog, toy_catalog):
    hgx = default_catalog.by_id("platforms")["hgx-h100"]
    assert spare_units(hgx, 128, None, spare_rule(_scenario(reliability={"spares": False}), default_catalog)) == 0
    assert spare_rule(_scenario(), toy_catalog).availability is None  # no `reliability:` block: no failure data


# ------------------------------------------------------------------------------ published runs


def _llama3_design(family: str = "fat-tree", dp: int = 128):
    """Llama 3 405B on 16,384 H100 with the published layout pinned (TP 8, PP 16, VP 8, DP 128; arXiv:2407.21783
    §3.3.2, tests/perf/calibration_rows.py), 8 × 400G per node on the shipped catalog's Ethernet switch."""
    catalog = solver.load_catalog()
    sc = solver.load_scenario({"name": "llama3", "workload": {"model": LLAMA3_405B, "global_batch_size": 2048,
                                                             "optimizer": "distributed"},
                               "target": {"step_time_s": 100.0}}).scenario
    arch = Architecture("hgx-h100", "bf3-400gbe", 8, "sn5600", 1.0, family)
    lay = Layout(tp=8, cp=1, pp=16, vp=8, dp=dp, microbatch_size=1, gpus_per_domain_used=8)
    return make_design(sc, catalog, arch, lay, 100.0)


def test_llama3_405b_interruptions_and_effective_training_time():
    """Llama 3 paper §3.3.4: 419 unexpected interruptions in a 54-day snapshot on 16,384 H100, effective training
    time above 90 %. Checks: the count within ±35 % (272–566), the goodput above 90 % and below 97 %.

    By hand: GPU 16,384 · 0.1106 · 54/365 = 268.1; software 16,384 · 0.0260 · 54/365 = 63.0; node 2,048 ·
    0.1518 · 54/365 = 46.0; NIC 16,384 · 0.00289 · 54/365 = 7.0; node links 16,384 · 0.00722 · 54/365 = 17.5;
    leaves: 64-port 800G SN5600 split to 128 × 400G, 64 down per leaf → 256 leaves (Meta had 1,024 ToRs) ·
    0.1155 · 54/365 = 4.4 → ≈ 406. δ = 405.9e9 params · 14 B / (0.122 GB/s · 16,384) = 5.683e12 / 1.999e12 = 2.84 s;
    M = 54·24/406 = 3.19 h; τ = √(2·2.84·11,490) = 255 s; at the default 5-min restart (docs/sources.md [G5])
    lost = 2.84/255 + (128 + 300)/11,490 = 0.0111 + 0.0372 → goodput ≈ 0.952 (at 15 min: 0.0111 + 0.0895 → 0.899).
    """
    d = _llama3_design()
    r = d.reliability
    in_54_days = r.interruptions_per_day * 54
    assert 419 * 0.65 <= in_54_days <= 419 * 1.35
    assert in_54_days == pytest.approx(406, rel=0.02)
    assert 0.90 <= r.goodput <= 0.97
    assert r.goodput == pytest.approx(0.952, abs=0.005)
    assert r.checkpoint_interval_min == pytest.approx(255 / 60, rel=0.05)


def test_kokolis_mttf_of_1024_gpu_jobs():
    """Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research Clusters" (arXiv:2410.21680,
    HPCA 2025, docs/sources.md [G2]): on Meta's RSC-1 (A100), 8-GPU jobs fail every 47.7 days and 1,024-GPU jobs
    every 7.9 hours. Input: the 8-GPU figure sets failure_rate_scale (the research fleet against the Llama 3
    rates); check: the 1,024-GPU MTTF within ±50 % (3.95–11.85 h). A model linear in the parts predicts about
    47.7 · 24 / 128 nodes = 8.9 h."""
    catalog = solver.load_catalog()

    def design(dp: int, scale: float):
        sc = solver.load_scenario({"name": "rsc", "workload": {"model": GPT3_1_3B, "global_batch_size": 1024},
                                   "target": {"step_time_s": 100.0},
                                   "reliability": {"spares": False, "failure_rate_scale": scale}}).scenario
        arch = Architecture("dgx-a100", "cx6-hdr", 8, "qm8700", 1.0)
        return make_design(sc, catalog, arch, Layout(tp=8, cp=1, pp=1, vp=1, dp=dp, microbatch_size=1,
                                                     gpus_per_domain_used=8), 100.0)

    one_node_h = design(1, 1.0).reliability.job_mtbf_h
    scale = one_node_h / (47.7 * 24)  # the rates that make an 8-GPU job fail every 47.7 days
    mttf_1024 = design(128, scale).reliability.job_mtbf_h
    assert 7.9 * 0.5 <= mttf_1024 <= 7.9 * 1.5
    assert mttf_1024 == pytest.approx(47.7 * 24 / 128, rel=0.1)


def test_goodput_falls_with_scale_and_rail_only_is_lower():
    """More parts, more interruptions: the pinned Llama 3 layout at 2k, 4k, 8k, 16k GPUs (DP 16…128); rail-only
    depends on every switch and link of its rails, the fat tree only on the leaves and node links."""
    fat = [_llama3_design("fat-tree", dp) for dp in (16, 32, 64, 128)]
    goodputs = [d.reliability.goodput for d in fat]
    assert goodputs == sorted(goodputs, reverse=True) and goodputs[0] > goodputs[-1]
    rail = _llama3_design("rail-only", 128)
    assert rail.cost.nodes == fat[-1].cost.nodes
    assert rail.reliability.goodput < fat[-1].reliability.goodput
    assert rail.reliability.interruptions_per_day > fat[-1].reliability.interruptions_per_day


# ------------------------------------------------------------------------------ the optimiser


GOODPUT_SPACE = dict(
    name="goodput-exact", workload=dict(model=GPT3_1_3B, global_batch_size=512),
    # 3e10 tokens in 0.0596 days: ⌈3e10 / (512·2048)⌉ = 28,611 steps → a raw target of 0.0596·86,400/28,611
    # = 0.1800 s (about 16 H100 nodes); failure_rate_scale 300 (a fleet 300× worse than Llama 3's) makes such
    # a job fail about every 1.5 h, goodput ≈ 0.75, so the goodput moves the answer.
    target=dict(train_tokens=3.0e10, train_days=0.0596),
    reliability=dict(failure_rate_scale=300.0, restart_min=20.0),
    constraints=dict(platforms=["hgx-h100", "gb200-nvl72"], rails_per_node=[1, 4, 8],
                     fabrics=["fat-tree", "rail-only"]),
    parallelism=dict(tp=[1, 2, 4], cp=1, pp=[1, 2], vp=1, microbatch_size=[1, 2]),
)


@pytest.fixture(scope="module")
def goodput_space():
    return solver.load_scenario(copy.deepcopy(GOODPUT_SPACE))


@pytest.mark.parametrize("prune", ["none", "dominated"])
def test_k_best_equal_enumeration_with_goodput_in_the_target(goodput_space, default_catalog, prune):
    sc = goodput_space.scenario
    expected = oracle.best_distinct(enumerated_designs(sc, default_catalog), 5)
    result = solver.solve(goodput_space, default_catalog, top_k=5, prune=prune)
    assert result.status == "optimal"
    assert [d.identity for d in result.designs] == [d.identity for d in expected]
    assert [round(d.objective_usd, 2) for d in result.designs] == [round(d.objective_usd, 2) for d in expected]
    for d in result.designs:
        assert d.reliability.in_target and d.meets_target
        assert d.perf.step_time_s / d.goodput <= d.target_step_time_s * (1 + 1e-9)
        assert any(line.category == "spares" and line.quantity > 0 for line in d.cost.bom)


def test_goodput_in_the_target_changes_the_answer(goodput_space, default_catalog):
    """Without the goodput in the target (target.goodput: 1, the manual override) the cheapest design's
    effective step misses the target; with it the optimiser buys a faster (dearer) one."""
    manual = copy.deepcopy(GOODPUT_SPACE)
    manual["target"]["goodput"] = 1.0
    plain = solver.solve(solver.load_scenario(manual), default_catalog, top_k=1).designs[0]
    assert not plain.reliability.in_target and plain.goodput == 1.0
    assert plain.perf.step_time_s / plain.reliability.goodput > plain.target_step_time_s  # misses, effectively
    best = solver.solve(goodput_space, default_catalog, top_k=1).designs[0]
    assert best.cost.capex_usd > plain.cost.capex_usd


@pytest.mark.parametrize("name", ["llama3-70b", "gpt3-175b"])
def test_spares_in_every_bom_of_a_shipped_example(default_catalog, name):
    """Every design holds spare capacity: bought spare units (the BOM's `spares` lines, idling at 30 % of the
    unit's power: catalog reliability.spare_idle_power_fraction), or in-domain spares (a 64-of-72 NVL72 layout's
    idle trays, already in the compute lines), and the JSON carries the goodput keys."""
    result = solver.solve(solver.load_scenario(REPO / "scenarios" / f"{name}.yaml"), default_catalog, top_k=3)
    assert result.designs
    for d in result.designs:
        spares = [line for line in d.cost.bom if line.category == "spares"]
        assert d.cost.spare_units > 0 or d.reliability.spare_gpus_in_domains > 0
        if d.cost.spare_units > 0:
            assert spares and spares[0].quantity == d.cost.spare_units
            plat = default_catalog.by_id("platforms")[d.architecture.platform]
            assert spares[0].power_w == pytest.approx(0.3 * plat.unit_power_kw * 1000)
        out = d.to_dict()
        for key in ("goodput", "interruptions_per_day", "job_mtbf_h", "checkpoint_interval_min", "spare_units"):
            assert key in out


# ------------------------------------------------------------------------------ the shipped example


def test_goodput_32k_example_changes_the_answer(default_catalog):
    """scenarios/goodput-32k.yaml (arithmetic in its header). 15.6T tokens in 40 days is a raw target of
    40 · 86,400 / 929,833 = 3.717 s. With the sourced default restart (5 min, issue 42, docs/sources.md [G5]) the #1
    is the NVL72 racks at 16,384 GPUs (4,626 trays with the spare rack): 8.45 interruptions/day, M = 2.840 h =
    10,223 s, δ = 2.84 s, τ = √(2 · 2.84 · 10,223) = 241 s, lost = 2.84/241 + (120.6 + 300)/10,223 = 0.0529, plus
    the planned interruptions (0.87/day, Llama 3 [G1]) at one restart each: 0.87 · 300 / 86,400 = 0.0030 →
    goodput 0.944; 3.498 / 0.944 = 3.71 s ≤ 3.717 s. With a 15-minute (cold checkpoint-restart) the same design
    has goodput 0.879 (lost 0.0118 + 1,020.6/10,223 + 0.87 · 900 / 86,400 = 0.0118 + 0.0998 + 0.0091), misses
    (3.98 s), and the cluster doubles to 32,768 GPUs: the DGX B200 (4,096 nodes; its 49 spares not cabled, the
    fabric is the job's 1,024 leaves: 15.20 interruptions/day, M = 5,684 s, τ = 127 s, lost = 0.0112 + (63.6 +
    900)/5,684 + 0.0091 = 0.1898 → 0.810) at $1.91B edges the 32k racks (goodput 0.791).
    Issue 41p (shape-aware GEMM efficiency): the racks' step is faster (3.23 s), so at 15 min they still meet the
    target (3.23/0.879 = 3.67 s); the switch now needs a 20-minute restart: racks lost = 0.0118 + (120.6 + 1,200)/10,223
    + 0.87 · 1,200/86,400 = 0.0118 + 0.1292 + 0.0121 → goodput 0.847 (any R > 994 s puts the racks' goodput below 3.23/3.717 =
    0.869); DGX B200 32k lost = 0.0112 + (63.6 + 1,200)/5,684 + 0.0121 = 0.2456 → 0.754."""
    import yaml

    path = REPO / "scenarios" / "goodput-32k.yaml"
    with_goodput = solver.solve(solver.load_scenario(path), default_catalog, top_k=5)
    best = with_goodput.designs[0]
    assert best.target_step_time_s == pytest.approx(40 * 86_400 / 929_833, rel=1e-9)  # 3.7168 s
    assert (best.architecture.platform, best.architecture.rails_per_node) == ("gb200-nvl72", 4)
    assert best.layout.dp == 256 and best.cost.nodes == 257 * 18  # 16,384 GPUs at 64 of 72, + 1 spare rack
    assert best.cost.spare_units == 1 and best.reliability.spare_gpus_in_domains == 256 * 8  # 64 of 72 used
    r = best.reliability
    assert r.in_target and r.restart_min == 5.0
    assert r.interruptions_per_day == pytest.approx(3_084.9 / 365, rel=0.002)  # 8.45
    assert r.job_mtbf_h == pytest.approx(2.840, rel=0.002)
    assert r.checkpoint_interval_min == pytest.approx(241 / 60, rel=0.005)
    assert best.goodput == pytest.approx(0.944, abs=0.002)
    assert best.perf.step_time_s / best.goodput <= best.target_step_time_s

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["target"]["train_tokens"] = float(doc["target"]["train_tokens"])  # PyYAML 1.1 reads 15.6e12 as text
    doc["reliability"]["restart_min"] = 20  # issue 41p: 15 → 20 (docstring)
    cold = solver.solve(solver.load_scenario(doc), default_catalog, top_k=5)
    first = cold.designs[0]

    def gpus(d):
        return d.layout.tp * d.layout.cp * d.layout.pp * d.layout.dp
    assert first.architecture.platform == "dgx-b200" and gpus(first) == 32_768
    assert first.cost.spare_units == 49 and first.cost.cabled_spare_units == 0  # 4,096 = 128 × 32: no free port
    assert first.cost.fabric.leaf_switches == 1024  # the job's fabric: 8 · 4,096 / 32, not 8 · ⌈4,145 / 32⌉ = 1,040
    assert first.reliability.interruptions_per_day == pytest.approx(15.20, abs=0.01)
    assert first.goodput == pytest.approx(0.754, abs=0.002)
    assert all(gpus(d) >= 32_768 for d in cold.designs)  # no 16k design meets the target effectively at 20 min
    assert first.cost.capex_usd > 1.9 * best.cost.capex_usd  # a cold restart doubles the cluster

    doc["target"]["goodput"] = 1.0
    manual = solver.solve(solver.load_scenario(doc), default_catalog, top_k=5)
    first = manual.designs[0]
    assert (first.architecture.platform, first.architecture.rails_per_node) == ("gb200-nvl72", 4)
    assert first.layout.dp == 256 and first.cost.nodes == 257 * 18  # 16,384 GPUs, + 1 spare rack
    assert first.goodput == 1.0 and not first.reliability.in_target
    assert first.perf.step_time_s <= first.target_step_time_s  # meets the raw target …
    assert first.reliability.goodput == pytest.approx(0.847, abs=0.002)
    assert first.perf.step_time_s / first.reliability.goodput > first.target_step_time_s  # … but not at 20 min


@pytest.mark.parametrize("columns", [80, 120])
def test_goodput_on_a_terminal(columns, tmp_path):
    """The ranked table still fits the terminal; each design's goodput line is printed (#1 0.944 at the default 5-min
    restart, #2 the DGX B200 at 32k: lost = 0.0112 + (63.6 + 300)/5,684 + 0.0030 = 0.0782 → 0.922), with what it
    rests on."""
    from test_planner_cli import run_in_pty

    screen = run_in_pty(["solve", REPO / "scenarios" / "goodput-32k.yaml", "--json", "r.json", "--no-xlsx"], columns,
                        tmp_path)
    table = [line for line in screen.splitlines() if line[:1] in "│┃┏┡└"]
    assert table and all(len(line) <= columns for line in table)
    flat = " ".join(screen.split())
    assert "#1 goodput 94.4%, in the target" in flat and "8.45 interruptions/day" in flat
    assert "1 spare gb200-nvl72" in flat and "#2 goodput 92.2%, in the target" in flat
    assert "goodput rests on: restart 5 min" in flat


def test_goodput_in_the_workbook_and_a_sweep(default_catalog):
    """The Summary's goodput rows and the Performance sheet's goodput table carry the design's numbers; a sweep's
    rows carry goodput, interruptions, MTBF, checkpoint interval and spares (from the same JSON). The sweep crosses
    the example's switch point (its header): at 40 days and a 20-min restart (15 min before issue 41p) the 32k DGX
    B200 (goodput 0.754), at 44 days (44 · 86,400 / 929,833 = 4.088 s) the 16k racks meet the target effectively
    (goodput 0.847, hand-worked in test_goodput_32k_example_changes_the_answer; 3.23 / 0.847 = 3.81 s)."""
    import yaml

    from solver.reports.excel import build_workbook

    ls = solver.load_scenario(REPO / "scenarios" / "goodput-32k.yaml")
    result = solver.solve(ls, default_catalog, top_k=2)
    wb = build_workbook(result, ls, default_catalog)
    summary = {row[0].value: [c.value for c in row[1:3]] for row in wb["Summary"].iter_rows() if row[0].value}
    d = result.designs[0]
    assert summary["Goodput (useful fraction of time)"][0] == pytest.approx(d.goodput)
    assert summary["Job interruptions per day"][0] == pytest.approx(d.reliability.interruptions_per_day)
    assert summary["Job MTBF (h)"][0] == pytest.approx(d.reliability.job_mtbf_h)
    assert summary["Checkpoint interval (min, Young/Daly)"][0] == pytest.approx(d.reliability.checkpoint_interval_min)
    assert summary["Hot-spare units (BOM spares)"][0] == d.cost.spare_units == 1
    perf = [c.value for row in wb["Performance"].iter_rows() for c in row if isinstance(c.value, str)]
    assert any(text.startswith("Goodput: failures, checkpoints and spares") for text in perf)
    doc = yaml.safe_load((REPO / "scenarios" / "goodput-32k.yaml").read_text(encoding="utf-8"))
    doc["target"]["train_tokens"] = float(doc["target"]["train_tokens"])
    doc["reliability"]["restart_min"] = 20
    report = solver.sweep(solver.load_scenario(doc), default_catalog, vary=["target.train_days=40,44"])
    rows = [p for p in report["points"] if p.get("architecture")]
    assert [p["gpus"] for p in rows] == [4_145 * 8, 257 * 72]  # nodes or racks bought, spares included
    assert [round(p["goodput"], 3) for p in rows] == pytest.approx([0.754, 0.847], abs=0.002)
    assert rows[0]["interruptions_per_day"] == pytest.approx(15.20, abs=0.01)
    assert rows[1]["interruptions_per_day"] == pytest.approx(8.45, abs=0.01)
    assert rows[1]["job_mtbf_h"] == pytest.approx(2.840, abs=0.002)
    assert [p["spare_units"] for p in rows] == [49, 1]
    assert rows[1]["checkpoint_interval_min"] == pytest.approx(241 / 60, rel=0.005)


def test_apply_to_target_and_the_manual_override(default_catalog):
    """A step_time_s target uses the goodput only with reliability.apply_to_target; target.goodput (with
    train_tokens) overrides the computed goodput for the target and the training days."""
    arch = Architecture("hgx-h100", "cx7-ndr", 8, "qm9700", 1.0)
    lay = Layout(tp=8, cp=1, pp=1, vp=1, dp=16, microbatch_size=1, gpus_per_domain_used=8)

    def design(**over):
        return make_design(_scenario(**over), default_catalog, arch, lay, 100.0)

    plain, applied = design(), design(reliability={"apply_to_target": True})
    assert not plain.reliability.in_target and plain.effective_target_s == 100.0
    assert applied.reliability.in_target
    assert applied.effective_target_s == pytest.approx(100.0 * applied.reliability.goodput)
    assert plain.goodput == applied.goodput == plain.reliability.goodput < 1.0  # computed and reported either way
    # 3e9 tokens at 512 · 2048 per step: ⌈2,861.02⌉ = 2,862 steps; days = steps · step / (0.5 · 86,400)
    manual = design(target={"train_tokens": 3e9, "train_days": 30, "goodput": 0.5})
    assert manual.goodput == 0.5 and not manual.reliability.in_target
    assert manual.train_days == pytest.approx(2862 * manual.perf.step_time_s / (0.5 * 86_400))
