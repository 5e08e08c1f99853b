"""The plain design-space builder (`design_space/plain.py`, issue 39 item 2) and the fast build layered over it.

On small scenarios made here (a tiny dense model and a tiny MoE model, two platforms, at most 128 GPUs; with margins,
k_q, an oversubscribed leaf, rail-only, `fastest` and the goodput in the target):
- the plain builder's points (class, layout, G_u, d) with their domains, memory, step time and every condition row
  are exactly the fast build's at prune="points" (whose speed layers only skip work);
- every point the fast build keeps at prune="dominated" is a plain point with the same rows;
- the MILP's K best over the plain space are the K best over the fast space as `solve` builds it (dominance, cost
  bound, one layout per cost): same identities, costs and step times;
- every design of the exhaustive enumeration (`optimize.oracle`, which applies the caps and prices each design one by
  one) is a point of the plain space with the same step time: the plain space is the candidate set the docs say;
- the fast build defines no point of its own: build.py and scan.py import the enumeration and the per-point
  functions from plain.py and none of the physics it wraps (one definition of "a point" and "is it feasible");
- docs/architecture.md draws the layering and names every function it says the fast build reuses."""
from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest
from conftest import enumerated_designs

import solver
from solver.design_space import build_design_space
from solver.design_space import plain as plain_module
from solver.design_space.plain import plain_design_space
from solver.optimize.data import with_pod_tiers
from solver.optimize.ranking import k_best

ROOT = Path(__file__).resolve().parents[2]

DENSE = dict(layers=8, hidden_size=2048, ffn_hidden_size=8192, ffn_type="swiglu", attention_heads=16, kv_heads=4,
             vocab_size=32000, seq_len=2048)
MOE = dict(layers=4, hidden_size=1024, ffn_hidden_size=4096, attention_heads=8, kv_heads=2, vocab_size=32000,
           seq_len=2048, moe=dict(experts=16, top_k=2, expert_ffn_hidden_size=512))


def _doc(model: dict, target: dict, platforms: list[str], **changes) -> dict:
    doc = dict(name="plain", workload=dict(model=model, global_batch_size=64, precision="bf16"), target=target,
               constraints=dict(max_gpus=128, platforms=platforms),
               parallelism=dict(tp=[1, 2, 4], cp=1, pp=[1, 2], vp=1, microbatch_size=[1, 2]), objective="capex",
               top_k=3)
    for key, value in changes.items():
        doc[key] = {**doc[key], **value} if isinstance(value, dict) and key in doc else value
    return doc


# 64 sequences of 2048 tokens per step: 131,072 tokens; 3e11 tokens in a day = a 37.7 ms effective step
CASES = {
    "dense": _doc(DENSE, dict(step_time_s=0.02), ["hgx-h100", "gb200-nvl72"]),
    "dense-margins-rail-only": _doc(
        DENSE, dict(step_time_s=0.03), ["hgx-h100", "hgx-b200"], objective="tco",
        constraints=dict(oversubscription=[1, 2], fabrics=["fat-tree", "rail-only"]),
        robustness=dict(compute_slowdown=0.1, bandwidth_derate=0.2, quantile=0.9)),
    "moe-fastest": _doc(MOE, dict(step_time_s=0.005), ["hgx-b200", "gb200-nvl72"], objective="fastest",
                        parallelism=dict(ep=[1, 2, 4, 8])),
    "goodput": _doc(DENSE, dict(train_tokens=3e11, train_days=1), ["hgx-h100", "gb200-nvl72"],
                    reliability=dict(availability=0.99, repair_h=72)),
}


def _scenario(name: str):
    return with_pod_tiers(solver.load_scenario(copy.deepcopy(CASES[name])).scenario)  # as `solve` builds it


def _points(space, pieces: bool = True) -> dict:
    """(class, layout, G_u, d) → (shape key, domains, d·mem, step time, every condition row at the point: each traffic
    class's pieces, or (`pieces` False) its exposure d·exposed_k = max(0, pieces) where positive — a shape leaves out
    a class whose pieces are never positive at any of its points, so a shape with fewer points may list fewer)."""
    out = {}
    for s in space.shapes:
        for j, d in enumerate(s.d_values):
            rows = tuple((c.name, c.comp[j], c.capacity[j], tuple(
                (x.name, tuple(p[j] for p in x.pieces)) if pieces else (x.name, x.at(j))
                for x in c.exposures if pieces or x.at(j) > 0)) for c in s.conditions)
            for perf in s.perfs:
                out[(perf, s.layout_shape, s.gpus_per_domain_used, d)] = (s.key, s.domains[j], s.mem[j],
                                                                         s.step_time_s[j], rows)
    return out


@pytest.fixture(scope="module")
def plain_spaces(default_catalog):
    return {name: plain_design_space(_scenario(name), default_catalog) for name in CASES}


@pytest.mark.parametrize("name", CASES)
def test_the_plain_points_are_the_fast_builds_at_points(default_catalog, plain_spaces, name):
    plain = _points(plain_spaces[name])
    assert len(plain) > 10  # the cases are made to keep points (the test would pass on two empty spaces)
    fast = _points(build_design_space(_scenario(name), default_catalog, "points"))
    assert plain.keys() == fast.keys()
    assert plain == fast


@pytest.mark.parametrize("name", CASES)
def test_every_point_the_dominance_scan_keeps_is_a_plain_point(default_catalog, plain_spaces, name):
    plain = _points(plain_spaces[name], pieces=False)
    kept = _points(build_design_space(_scenario(name), default_catalog, "dominated"), pieces=False)
    assert kept and set(kept) <= set(plain)
    if CASES[name]["objective"] != "fastest":  # (`fastest` keeps each point faster than every smaller d: here all)
        assert len(kept) < len(plain)  # the cases have dominated points
    if name != "goodput":  # (with the goodput in the target the dominance scan also records each point's need)
        assert all(kept[k] == plain[k] for k in kept)
    else:
        assert all(kept[k][:4] == plain[k][:4] for k in kept)


def _answer(search) -> list[tuple]:
    return [(d.identity_by("architecture"), d.layout, round(d.objective_usd, 2), d.perf.step_time_s)
            for d in search.designs]


@pytest.mark.parametrize("name", CASES)
def test_the_milp_answer_is_the_same_on_either_space(default_catalog, plain_spaces, name):
    sc = _scenario(name)
    fast = build_design_space(sc, default_catalog, "dominated", one_layout_per_cost=True, top_k=sc.top_k)
    from_plain, from_fast = (k_best(space, sc.top_k) for space in (plain_spaces[name], fast))
    assert len(from_plain.designs) == sc.top_k
    assert _answer(from_plain) == _answer(from_fast)


def test_every_enumerated_design_is_a_plain_point(default_catalog, plain_spaces):
    """The exhaustive enumeration prices every architecture × layout × d one by one and keeps the designs within the
    caps: each is a point of the plain space (its class, layout, G_u and d) with the same step time."""
    sc = _scenario("dense")
    plain = _points(plain_spaces["dense"])
    designs = enumerated_designs(sc, default_catalog)
    assert designs
    for design in designs:
        lay = design.layout
        key = (design.architecture.perf, lay.shape, lay.gpus_per_domain_used, lay.dp)
        assert key in plain
        assert plain[key][3] == pytest.approx(design.perf.step_time_s, rel=1e-12)


def test_the_plain_counts_add_up(plain_spaces):
    """Each (class, layout, G_u, d, switch) combination is kept or pruned for the first check it fails."""
    for space in plain_spaces.values():
        assert sum(space.pruned.values()) + space.points == space.combinations


# the functions the fast build reuses from plain.py (one definition of "a point" and "is it feasible")
SHARED = ("performance_classes", "domain_sizes", "placeable", "point_performance", "point_memory_gb", "fits_memory",
          "step_need", "meets_target", "goodput_at", "condition_rows", "shape_of")
# what those functions wrap: the fast build must not call it itself
WRAPPED = {"performance", "memory_per_gpu_gb", "point_terms", "point_factor", "placement_problem", "dp_candidates",
           "architectures"}


def _imports(module: str) -> dict[str, set[str]]:
    tree = ast.parse((ROOT / "solver" / "design_space" / f"{module}.py").read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.setdefault(node.module or "", set()).update(a.name for a in node.names)
    return out


def test_the_fast_build_reuses_the_plain_functions_and_wraps_no_physics_of_its_own():
    used = set()
    for module in ("build", "scan"):
        imports = _imports(module)
        used |= imports.get("plain", set())
        assert not WRAPPED & set().union(*(names for name, names in imports.items() if name != "plain")), module
    assert used == set(SHARED)
    assert all(callable(getattr(plain_module, name)) for name in SHARED)


def test_the_docs_draw_the_layering_as_it_is():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## The design space: a plain builder and its speed layers", 1)[1].split("\n## ", 1)[0]
    assert "design_space/plain.py" in section and "plain_design_space" in section
    for name in SHARED:
        assert f"`{name}`" in section, name
    for layer in ("memo", "bisection", "dominance", "cost bound", "helper process"):
        assert layer in section, layer
