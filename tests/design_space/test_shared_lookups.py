"""The lookups a scenario's builds share through the scan memo (issue 47t) and the infinite-target shortcut: speed
layers that cannot change the answer.

A solve whose answer is infeasible builds its scenario's space three times (the solve's own build at T with the
budget cut, `optimize.solve._explain`'s rebuild with the budget cut at 2 × budget_usd, and `fastest_within_caps`
with the target removed). With one memo those builds read each other's NVLink domains per d, job nodes, first open
indices (per target), fat-tree dominance verdicts (per goodput rule), goodput bounds and the budget cut's bound (per
budget; the architectures' capex lower bounds shared by every budget). Checked here:
- each build of that sequence on a shared memo equals the same build from scratch (shapes with every row, pruned
  counts, combinations, architectures, budget cut, fastest and leanest points), on small dense, goodput and MoE
  scenarios and on the shipped train-400b-90-days and budget-60m-fastest, and the memo did hold the shared lookups;
- the solve's terminal text and JSON are the same with the sharing switched off (`ScanMemo.share_lookups`), on
  train-400b-90-days (the sequence above) and budget-60m-fastest;
- at an infinite target a point is open exactly when it fits in memory (`ScanContext.is_open` skips T_comp + bubble):
  the fast build at prune="points" of a `fastest` scenario without a target is the plain builder's."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

import solver
from solver import cli
from solver.design_space import build_design_space
from solver.design_space.memo import ScanMemo
from solver.design_space.plain import plain_design_space
from solver.inputs.schema import Target
from solver.optimize.data import with_pod_tiers

ROOT = Path(__file__).resolve().parents[2]

DENSE = dict(layers=8, hidden_size=2048, ffn_hidden_size=8192, ffn_type="swiglu", attention_heads=16, kv_heads=4,
             vocab_size=32000, seq_len=2048)
MOE = dict(layers=4, hidden_size=1024, ffn_hidden_size=4096, attention_heads=8, kv_heads=2, vocab_size=32000,
           seq_len=2048, moe=dict(experts=16, top_k=2, expert_ffn_hidden_size=512))


def _doc(model: dict, target: dict, budget_usd: float, **changes) -> dict:
    doc = dict(name="shared", workload=dict(model=model, global_batch_size=64, precision="bf16"), target=target,
               constraints=dict(max_gpus=128, platforms=["hgx-h100", "hgx-b200", "gb200-nvl72"], budget_usd=budget_usd,
                                fabrics=["fat-tree", "rail-only"]),
               parallelism=dict(tp=[1, 2, 4], cp=1, pp=[1, 2], vp=1, microbatch_size=[1, 2]), objective="capex",
               top_k=3)
    doc.update(changes)
    return doc


# budgets below what the target needs (the solve's build keeps nothing: the explanation's builds run), and above
CASES = {
    "dense-tight": _doc(DENSE, dict(step_time_s=0.02), 1.0e6),
    "dense": _doc(DENSE, dict(step_time_s=0.03), 20.0e6),
    # 3e11 tokens in a day: a 37.7 ms effective step, the goodput in the target
    "goodput-tight": _doc(DENSE, dict(train_tokens=3e11, train_days=1), 1.0e6,
                          reliability=dict(availability=0.99, repair_h=72)),
    "moe": _doc(MOE, dict(step_time_s=0.005), 3.0e6, parallelism=dict(tp=[1, 2], cp=1, pp=1, vp=1,
                                                                      microbatch_size=[1, 2], ep=[1, 2, 4, 8])),
}


def _small(name: str):
    return with_pod_tiers(solver.load_scenario(copy.deepcopy(CASES[name])).scenario)  # as `solve` builds it


def _shipped(name: str):
    return with_pod_tiers(solver.load_scenario(ROOT / "scenarios" / f"{name}.yaml").scenario)


def _builds(sc) -> list[tuple]:
    """The builds of a solve whose answer needs explaining, in its order (`optimize.solve._solve`, `_explain`,
    `diagnose.fastest_design`), then the solve's own build again: (scenario, keyword arguments)."""
    k = sc.top_k
    budget = sc.constraints.budget_usd
    fast = sc.model_copy(update={"objective": "fastest", "target": Target()})
    out = [(sc, dict(one_layout_per_cost=True, top_k=k))]
    if budget is not None:
        out.append((sc, dict(one_layout_per_cost=True, budget_cut_usd=2 * budget)))
    out += [(fast, dict(one_layout_per_cost=True, top_k=1)), (sc, dict(one_layout_per_cost=True, top_k=k))]
    return out


def _view(space) -> tuple:
    """Everything of a space the model and the reports read."""
    shapes = []
    for s in space.shapes:
        conditions = [(c.name, tuple(c.comp), tuple(c.capacity), tuple((x.name, tuple(map(tuple, x.pieces)))
                                                                        for x in c.exposures)) for c in s.conditions]
        shapes.append((s.key, tuple(sorted(map(str, s.perfs))), tuple(s.d_values), tuple(s.domains),
                       tuple(s.step_time_s), tuple(s.mem), tuple(conditions), tuple(s.needed_goodput or ())))
    return (shapes, space.pruned, space.combinations, [a.label() for a in space.architectures], space.budget_cut,
            space.fastest, space.leanest, space.complete)


def _check_sequence(sc, catalog) -> ScanMemo:
    memo = None
    for scenario, options in _builds(sc):
        shared = build_design_space(scenario, catalog, "dominated", memo=memo, **options)
        assert shared.memo is memo or memo is None  # the sequence kept its memo
        memo = shared.memo
        assert _view(shared) == _view(build_design_space(scenario, catalog, "dominated", **options)), options
    assert memo is not None
    return memo


@pytest.mark.parametrize("name", CASES)
def test_each_build_of_the_sequence_on_one_memo_equals_the_build_from_scratch(default_catalog, name):
    memo = _check_sequence(_small(name), default_catalog)
    # the later builds did read the earlier ones' lookups (else this test checks nothing)
    assert memo.domains and memo.nodes and len(memo.open_from) == 2  # T and ∞
    assert all(memo.open_from.values())
    assert set(memo.budget_bounds) == {CASES[name]["constraints"]["budget_usd"],
                                       2 * CASES[name]["constraints"]["budget_usd"]}
    assert memo.capex_lower_bounds  # both budgets' bounds keep their lower bounds there
    assert bool(memo.goodput_bounds) == name.startswith("goodput")


def test_the_small_cases_are_infeasible_where_they_say_so(default_catalog):
    """The tight budgets leave the solve's build without a shape (the explanation's builds run in a solve), the
    others keep some; every budget but the dense case's $20M cuts points."""
    for name in CASES:
        sc = _small(name)
        space = build_design_space(sc, default_catalog, "dominated", one_layout_per_cost=True, top_k=sc.top_k)
        assert bool(space.shapes) == (not name.endswith("tight")), name
        assert space.budget_cut > 0 or name == "dense", name  # the budget cut left points unevaluated


@pytest.mark.parametrize("name", ["train-400b-90-days", "budget-60m-fastest"])
def test_the_shipped_sequences_equal_the_builds_from_scratch(default_catalog, name):
    _check_sequence(_shipped(name), default_catalog)


def test_the_open_indices_of_few_targets_are_kept(default_catalog):
    """At most OPEN_FROM_TARGETS targets' first open indices; the latest used are kept, and a build at a target
    whose indices were dropped equals the build from scratch."""
    from solver.design_space.memo import OPEN_FROM_TARGETS
    from solver.optimize.frontier import lowered_target

    sc = _small("dense")
    memo = None
    targets = [0.03 * (1 + i / 10) for i in range(OPEN_FROM_TARGETS + 2)]
    for t in [*targets, targets[0]]:
        lower = lowered_target(sc, t)
        space = build_design_space(lower, default_catalog, "dominated", memo=memo)
        memo = space.memo
        assert _view(space) == _view(build_design_space(lower, default_catalog, "dominated"))
        assert len(memo.open_from) <= OPEN_FROM_TARGETS
    assert list(memo.open_from)[-1] == lowered_target(sc, targets[0]).target_step_time_s()


def _cli(name: str, out: Path, capsys) -> tuple[str, dict, int]:
    """The solve's terminal text and JSON without their timings, and its exit code (infeasible: not 0)."""
    code = cli.main(["solve", str(ROOT / "scenarios" / f"{name}.yaml"), "--json", str(out)])
    text = capsys.readouterr().out
    return _untimed(text), _untimed_json(json.loads(out.read_text(encoding="utf-8"))), code


TIMED = re.compile(r"(elapsed|seconds|wall|cpu|timing|time_used|run_id|date_utc|solve_s$|_time_s$|^time_s$|build_s|written|generated)",
                   re.I)


def _untimed_json(data):
    if isinstance(data, dict):
        return {k: _untimed_json(v) for k, v in data.items() if not TIMED.search(k)}
    if isinstance(data, list):
        return [_untimed_json(v) for v in data]
    return data


def _untimed(text: str) -> str:
    """The text without its timings (`… in 0.93 s`, `(1.2 s)`) and the output file names."""
    text = re.sub(r"\d+(\.\d+)? ?(s|ms)\b", "T", text)
    return "\n".join(line for line in text.splitlines() if "json" not in line.lower())


@pytest.mark.parametrize("name", ["train-400b-90-days", "budget-60m-fastest"])
def test_the_solve_text_and_json_are_the_same_without_the_sharing(name, tmp_path, capsys, monkeypatch):
    shared = _cli(name, tmp_path / "shared.json", capsys)
    monkeypatch.setattr(ScanMemo, "share_lookups", False)
    alone = _cli(name, tmp_path / "alone.json", capsys)
    assert shared[1] == alone[1]
    assert shared[0] == alone[0]
    assert shared[2] == alone[2]
    # a real answer was compared: budget-60m-fastest ranks designs, train-400b-90-days explains why none exists
    assert shared[1]["designs"] if name.startswith("budget") else "fastest design reaches" in shared[0]


def _points(space) -> dict:
    return {(perf, s.layout_shape, s.gpus_per_domain_used, d): (s.domains[j], s.mem[j], s.step_time_s[j])
            for s in space.shapes for j, d in enumerate(s.d_values) for perf in s.perfs}


def test_at_an_infinite_target_the_open_points_are_those_that_fit_in_memory(default_catalog):
    """The fast build skips T_comp + bubble when the target is infinite; the plain builder checks every point in
    full: their points are the same."""
    # ≈ 21B parameters: 16 bytes each (bf16 weights and gradients, fp32 Adam) is ≈ 340 GB before sharding, so the
    # layouts with few GPUs per replica and a small dp do not fit in 80-192 GB
    big = dict(DENSE, layers=24, hidden_size=8192, ffn_hidden_size=28672, attention_heads=64, kv_heads=8)
    doc = _doc(big, {}, 50.0e6, objective="fastest")
    sc = with_pod_tiers(solver.load_scenario(doc).scenario)
    assert sc.target_step_time_s() == float("inf")
    plain = plain_design_space(sc, default_catalog)
    fast = build_design_space(sc, default_catalog, "points")
    assert len(_points(plain)) > 10
    assert _points(plain) == _points(fast)
    assert plain.pruned["memory"] > 0  # memory did prune: the shortcut skips only the target check
