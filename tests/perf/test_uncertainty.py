"""Every step time with its uncertainty (SPEC §4.8, issue #23 item 5): the residual table shipped in the package,
the regime and its fallback, the p10–p90 interval, the quantile factor k_q, and robustness.quantile in the MILP
(checked against the exhaustive enumeration)."""
from __future__ import annotations

import copy

import pytest
import yaml
from calibration_rows import ROWS, calibration_catalog, evaluate, residual_rows, throughput_error
from conftest import enumerated_designs

import solver
from solver.api import solve
from solver.optimize import oracle
from solver.perf import uncertainty as u

CATALOG = calibration_catalog()


def test_the_shipped_residual_table_is_in_step_with_the_calibration_rows():
    """solver/perf/residuals.yaml is generated (tools/calibrate.py --residuals): regenerating it from the rows and
    the shipped catalog gives the same regimes and errors (rounded to 1e-4)."""
    shipped = yaml.safe_load(u.RESIDUALS_PATH.read_text(encoding="utf-8"))["rows"]
    fresh = residual_rows(CATALOG)
    assert [r["id"] for r in shipped] == [r["id"] for r in fresh]
    for old, new in zip(shipped, fresh):
        assert {k: old[k] for k in ("stack", "gpu", "precision", "term")} == \
            {k: new[k] for k in ("stack", "gpu", "precision", "term")}, old["id"]
        assert old["error"] == pytest.approx(new["error"], abs=2e-4), old["id"]
    assert len(shipped) >= 100


def test_the_interval_is_the_regime_quantiles_widened_to_the_floor():
    # q10 = −12 %, q90 = +3 %: lower end 2 s · (1 − 0.12) = 1.76 s; the upper end is widened to the 8 % floor:
    # 2 s · 1.08 = 2.16 s.
    reg = u.Regime("megatron·x·bf16·compute", "megatron·x·bf16·compute", 6, -0.12, 0.03)
    assert u.step_time_interval_s(2.0, reg) == pytest.approx((1.76, 2.16))
    assert reg.text() == "-12%/+8%, 6 runs (megatron·x·bf16·compute)"
    assert u.Regime("a·b·c·d", "a·b·c·d", 0, -0.08, 0.08).text() == "no calibration run in any regime of a·b·c·d"


def test_the_dominant_term_splits_at_half_the_step():
    assert str(u.regime_term(0.5, 1.0)) == "compute"
    assert str(u.regime_term(0.49, 1.0)) == "communication"
    assert list(u.regime_term([0.6, 0.2], [1.0, 1.0])) == ["compute", "communication"]  # numpy-friendly


def test_a_regime_without_rows_falls_back_and_says_so():
    rows = u.residual_rows()
    # a stack with no calibration row: the interval comes from every row, and the text names the regime asked for
    reg = u.regime("no-rows", "h100-sxm", "bf16", "compute")
    assert reg.fell_back and reg.used == "every calibration run" and reg.rows == len(rows)
    assert "no 4+ runs in no-rows·h100-sxm·bf16·compute" in reg.text()
    # megatron H100 FP8, compute-bound: the NeMo and Megatron-Bridge rows, no fallback
    own = [r for r in rows if (r.stack, r.gpu, r.precision, r.term) == ("megatron", "h100-sxm", "fp8", "compute")]
    reg = u.regime("megatron", "h100-sxm", "fp8", "compute")
    assert not reg.fell_back and reg.rows == len(own) >= 10
    # Blackwell BF16 has no row: megatron · bf16 (A100 and H100 rows)
    reg = u.regime("megatron", "b200", "bf16", "compute")
    assert reg.used == "megatron·bf16" and reg.rows == sum(r.stack == "megatron" and r.precision == "bf16" for r in rows)


def _quantile(values: list[float], q: float) -> float:
    """Linear-interpolation quantile by hand: position q·(n − 1) between the sorted neighbours."""
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    i = int(pos)
    return xs[i] + (pos - i) * (xs[min(i + 1, len(xs) - 1)] - xs[i])


def test_the_quantile_factor_is_one_plus_the_regime_quantile_at_least_the_floor():
    rows = [r.error for r in u.residual_rows()
            if (r.stack, r.gpu, r.precision, r.term) == ("megatron", "h100-sxm", "fp8", "compute")]
    k = u.quantile_factor("megatron", "h100-sxm", "fp8", "compute", 0.9)
    assert k == pytest.approx(1 + max(_quantile(rows, 0.9), u.FLOOR))
    assert u.point_factor("megatron", "h100-sxm", "fp8", 1.0, 1.0, None) == 1.0  # no robustness.quantile


def test_the_intervals_hold_80_percent_of_physics_v3s_own_held_out_runs():
    """The v3_held_out rows (Megatron-Bridge 25.09 / 26.02, MT-NLG) are not in the residual table: their published
    step time lies inside the p10–p90 interval of their regime for ≥ 80 % of them (14 of 17 when written)."""
    held = [r for r in ROWS if r.group == "v3_held_out"]
    inside = 0
    for row in held:
        perf, _ = evaluate(row, CATALOG)
        reg = u.design_regime(row.stack_id, perf.hw.gpu_id, row.precision, perf.compute_s + perf.bubble_s,
                              perf.step_time_s)
        lo, hi = u.step_time_interval_s(perf.step_time_s, reg)
        published_step = perf.step_time_s * (1 + throughput_error(row, CATALOG))
        inside += lo <= published_step <= hi
    assert inside / len(held) >= 0.80


# GPT-3 1.3B (Brown et al. 2020, Table 2.1) on Hopper, the first space of tests/optimize/test_optimizer.py
GPT3_1_3B = dict(layers=24, hidden_size=2048, ffn_hidden_size=8192, ffn_type="gelu", attention_heads=16,
                 vocab_size=51200, seq_len=2048)
SPACE = dict(name="exact-quantile", workload=dict(model=GPT3_1_3B, global_batch_size=512),
             target=dict(step_time_s=2.0), robustness=dict(quantile=0.9),
             constraints=dict(platforms=["hgx-h100", "dgx-h100"], rails_per_node=[1, 8]),
             parallelism=dict(tp=[1, 2, 4, 8], cp=1, pp=[1, 2], vp=1, microbatch_size=[1, 2]))


@pytest.mark.parametrize("prune", ["none", "dominated"])
def test_robustness_quantile_k_best_equal_the_enumeration(prune, default_catalog):
    """robustness.quantile = 0.9: the MILP meets the target with each point's step time × k_0.9 of its regime (a
    per-point coefficient); its K best equal the exhaustive enumeration's, and the quantile binds (the nominal
    enumeration keeps designs the quantile one drops)."""
    ls = solver.load_scenario(copy.deepcopy(SPACE))
    expected = enumerated_designs(ls.scenario, default_catalog)
    nominal_doc = copy.deepcopy(SPACE)
    del nominal_doc["robustness"]
    nominal = enumerated_designs(solver.load_scenario(nominal_doc).scenario, default_catalog)
    assert len(expected) < len(nominal)
    result = solve(solver.load_scenario(copy.deepcopy(SPACE)), default_catalog, top_k=5, prune=prune)
    best = oracle.best_distinct(expected, 5)
    assert result.status == "optimal" and len(best) >= 3
    assert [d.identity for d in result.designs] == [d.identity for d in best]
    assert [round(d.objective_usd, 2) for d in result.designs] == [round(d.objective_usd, 2) for d in best]
    for d in result.designs:
        assert d.perf.step_time_s * d.quantile_factor <= 2.0 * (1 + 1e-9)
        assert d.quantile_factor >= 1 + u.FLOOR
        assert d.to_dict()["uncertainty"]["quantile_step_time_s"] == pytest.approx(d.perf.step_time_s * d.quantile_factor)


def test_reports_name_the_stack_and_the_interval(default_catalog):
    """JSON: the result's `stack`, each design's `step_time_interval_s` around its step time and its regime; the
    terminal prints the stack and one interval line per design (rich console, 80 columns)."""
    from rich.console import Console

    from solver.reports.terminal import print_solve

    doc = copy.deepcopy(SPACE)
    del doc["robustness"]
    doc["workload"]["stack"] = "fsdp"
    doc["parallelism"]["pp"] = 1
    result = solve(solver.load_scenario(doc), default_catalog, top_k=2)
    data = result.to_dict()
    assert data["stack"] == "fsdp"
    for d in data["designs"]:
        lo, hi = d["step_time_interval_s"]
        assert lo < d["step_time_s"] < hi and d["stack"] == "fsdp"
        assert d["uncertainty"]["regime"].startswith("fsdp·h100-sxm·bf16·")
    console = Console(width=80, record=True, force_terminal=False)
    print_solve(result, console)
    text = console.export_text()
    assert "software stack: fsdp" in text and "#1 step time p10–p90" in text
