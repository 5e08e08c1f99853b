"""The per-layout terms are array-polymorphic in d (solver/perf/vector.py): `performance`, `step_time_on`,
`point_terms` and `memory_per_gpu_gb` called with an array of every placeable d of a layout equal, element by
element and to the last bit, the same functions called with each d on its own."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import solver
from solver.design_space import _Context, _placeable, architectures, hardware_of
from solver.optimize.solve import catalog_for
from solver.perf.layout import layout_shapes
from solver.perf.memory import memory_per_gpu_gb
from solver.perf.step import performance, point_terms, step_time_on
from solver.perf.traffic import overlap_for
from solver.perf.vector import at

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("scenario", ["scenarios/llama3-70b.yaml", "scenarios/deepseek-v3.yaml",
                                      "scenarios/qwen3-235b-a22b.yaml", "scenarios/frontier-100k.yaml"])
def test_array_over_d_equals_each_d(scenario):
    check(str(ROOT / scenario))


def same(a, b, what):
    if isinstance(a, tuple):
        assert len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b)): same(x, y, f"{what}[{i}]")
        return
    if a != b and not (a != a and b != b):
        raise AssertionError(f"{what}: {a!r} != {b!r}")

def check(path, limit_layouts=10**9, catalogs=None):
    ls = solver.load_scenario(path); sc = ls.scenario; cat = catalog_for(ls)
    perfs = sorted({a.perf for a in architectures(sc, cat)})
    ov = overlap_for(sc); ctx = _Context(sc, cat, "none")
    n = 0
    plats = cat.by_id("platforms")
    for perf in perfs:
        hw = hardware_of(sc, cat, perf); plat = plats[perf.platform]
        for g in plat.domain_sizes(sc.pin.gpus_per_domain_used):
            for shape in layout_shapes(sc)[:limit_layouts]:
                ds = _placeable(ctx, shape, g, 1)
                if not ds: continue
                arr = shape.layout(dp=np.array(ds), gpus_per_domain_used=g)
                q = performance(sc.workload, arr, hw, ov)
                mem = memory_per_gpu_gb(sc.workload, arr, ctx.params)
                st = {c: step_time_on(q, hw, s_, d_) for c, (s_, d_) in enumerate([(0,0),(0.1,0),(0,0.2)])}
                pt = point_terms(q, hw, 0.1, 0.2)
                for j, d in enumerate(ds):
                    one = shape.layout(dp=d, gpus_per_domain_used=g)
                    r = performance(sc.workload, one, hw, ov)
                    w = f"{path} {perf.key()} g{g} {shape.describe()} d={d}"
                    for f in ("step_time_s", "compute_s", "bubble_s", "memory_states_gb", "memory_activations_gb", "capacity_s", "scaleout_busy_s", "nvlink_busy_s", "microbatches", "gpus"):
                        same(at(getattr(q, f), j), getattr(r, f), w + " " + f)
                    same(at(mem, j), memory_per_gpu_gb(sc.workload, one, ctx.params), w + " mem")
                    for k, t in r.traffic.items():
                        tq = q.traffic[k]
                        for f in ("nvlink_bytes", "scaleout_bytes", "time_s", "exposed_s", "chi", "pod_crossing"):
                            same(at(getattr(tq, f), j), getattr(t, f), f"{w} {k}.{f}")
                        for f in ("launches", "nvlink_steps", "scaleout_steps"):
                            same(at(getattr(tq.steps, f), j), getattr(t.steps, f), f"{w} {k}.steps.{f}")
                        same(tuple((at(a, j), at(b, j)) for a, b in tq.pieces), t.pieces, f"{w} {k}.pieces")
                    for c, (s_, d_) in enumerate([(0,0),(0.1,0),(0,0.2)]):
                        same(at(st[c], j), step_time_on(r, hw, s_, d_), f"{w} step_time_on{c}")
                    p1 = point_terms(r, hw, 0.1, 0.2)
                    same(at(pt.compute_s, j), p1.compute_s, w + " pt.compute"); same(at(pt.capacity_s, j), p1.capacity_s, w + " pt.cap")
                    for k in p1.pieces: same(tuple(at(x, j) for x in pt.pieces[k]), p1.pieces[k], w + " pt." + k)
                    same(at(pt.step_time_s, j), p1.step_time_s, w + " pt.step")
                    n += 1
    print(path, "points", n)


