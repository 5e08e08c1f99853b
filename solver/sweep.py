"""Sensitivity sweeps (SPEC §9): solve a list of scenario variants and compare the answers.

A sweep is a list of *points*; each point is the base scenario with some numeric fields replaced
(and optionally a named model shape swapped in), solved independently with `top_k = 1`. Points are
built from the scenario's `sweep:` block or from `--vary PATH=SPEC` flags, run serially, in a local
process pool or on a Dask cluster, appended to a JSONL results file as they finish (so `--resume`
loses nothing), and reported as a table, switch points, incremental purchases, JSON, an Excel
`Sweep` sheet and a PNG plot.

Workers receive and return plain dicts only (stack-notes §5: Pyomo models and HiGHS objects do not
pickle); each worker process keeps HiGHS at one thread (the adapter's default).
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import time
import typing
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Optional

from pydantic import BaseModel, ValidationError

from .loading import Document, InputError, LoadedCatalog, LoadedScenario
from .schema import NamedModel, Scenario, Sweep, SweepGrowth, SweepParameter, SweepRange

SCHEMA = "fabricplan.sweep/1"
MAX_POINTS = 10_000
MODEL_AXIS = "model"
FORBIDDEN_ROOTS = ("sweep", "top_k")  # a point is solved with top_k = 1 and no sweep block
SECONDS_PER_YEAR = 365.25 * 86_400


class SweepUsageError(Exception):
    """A bad `--vary`/`--combine`/`--resume` flag (exit code 2, no file:line to point at)."""


# ------------------------------------------------------------------------------- field paths


def _leaf_types(annotation) -> set:
    """The scalar types an annotation accepts (Optional, Annotated and Union unwrapped; lists skipped)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _leaf_types(typing.get_args(annotation)[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        found: set = set()
        for arg in typing.get_args(annotation):
            found |= _leaf_types(arg)
        return found
    if origin is not None:  # list[...], dict[...]: not a number
        return set()
    return {annotation}


def _submodel(annotation) -> Optional[type[BaseModel]]:
    for leaf in _leaf_types(annotation):
        if isinstance(leaf, type) and issubclass(leaf, BaseModel):
            return leaf
    return None


def field_kind(path: str) -> str:
    """'int' or 'float' for a numeric scenario field at dotted `path`; ValueError saying why not."""
    parts = path.split(".")
    if parts[0] in FORBIDDEN_ROOTS:
        raise ValueError(f"'{parts[0]}' cannot be swept")
    cls: Optional[type[BaseModel]] = Scenario
    for depth, key in enumerate(parts):
        info = cls.model_fields.get(key) if cls is not None else None
        if info is None:
            where = ".".join(parts[:depth]) or "the scenario"
            valid = ", ".join(cls.model_fields) if cls is not None else ""
            raise ValueError(f"no field '{key}' in {where}" + (f" (fields: {valid})" if valid else ""))
        if depth < len(parts) - 1:
            cls = _submodel(info.annotation)
            if cls is None:
                raise ValueError(f"'{'.'.join(parts[:depth + 1])}' is not a block with fields")
            continue
        leaves = _leaf_types(info.annotation)
        if bool in leaves:
            raise ValueError(f"'{path}' is a yes/no field, not a number")
        if int in leaves:
            return "int"
        if float in leaves:
            return "float"
        raise ValueError(f"'{path}' is not a numeric field")
    raise ValueError("empty path")


def _get(data: dict, path: str):
    node = data
    for key in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _set(data: dict, path: str, value) -> None:
    parts = path.split(".")
    node = data
    for key in parts[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[parts[-1]] = value


# ----------------------------------------------------------------------------------- axes


@dataclass
class Axis:
    """One swept dimension: a field path with its values, or the named-model list."""

    name: str  # field path, or "model"
    values: list  # numbers for a field; NamedModel for the model axis
    loc: tuple  # where the axis is defined in the YAML (for errors); () for a flag
    kind: str = "float"  # int | float | model
    rounded: bool = False  # some values were rounded to integers

    def label(self, value) -> str:
        if self.kind == "model":
            return value.name
        return f"{value:,}" if self.kind == "int" else f"{value:g}"


def parameter_values(param: SweepParameter, base: dict) -> list[float]:
    """The raw values of one parameter (before rounding).

    range:  start, start + step, …, while ≤ stop (stop included up to a 1e-9 relative tolerance)
    growth: v_k = v_0 · factor^k for k = 0 … steps (steps + 1 values; v_0 = the scenario's value)
    """
    if param.values is not None:
        return [float(v) for v in param.values]
    if param.range is not None:
        r = param.range
        if r.stop < r.start:
            raise ValueError(f"range stop {r.stop:g} is below start {r.start:g}")
        count = math.floor((r.stop - r.start) / r.step * (1 + 1e-9) + 1e-9) + 1
        if count > MAX_POINTS:
            raise ValueError(f"range gives {count:,} values; the limit is {MAX_POINTS:,}")
        return [r.start + i * r.step for i in range(count)]
    start = _get(base, param.path)
    if not isinstance(start, (int, float)) or isinstance(start, bool):
        raise ValueError(f"growth starts from the scenario's value of {param.path}, which is not set to a number "
                         f"(got {start!r}): set it, or use values or range")
    g = param.growth
    return [float(start) * g.factor ** k for k in range(g.steps + 1)]


def make_axis(param: SweepParameter, base: dict, loc: tuple) -> Axis:
    """Check the path and values of one parameter; integer fields get values rounded half up."""
    kind = field_kind(param.path)
    raw = parameter_values(param, base)
    rounding = param.round_to_int if param.round_to_int is not None else kind == "int"
    if kind == "int" and not rounding:
        bad = [v for v in raw if v != math.floor(v)]
        if bad:
            raise ValueError(f"{param.path} is an integer field and round_to_int is false, but {bad[0]:g} is not whole")
    values = [int(math.floor(v + 0.5)) for v in raw] if rounding else raw
    rounded = any(abs(v - r) > 1e-9 for v, r in zip(values, raw))
    return Axis(param.path, values, loc, "int" if rounding else "float", rounded)


# -------------------------------------------------------------------------------- --vary flags


_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def parse_vary(spec: str) -> SweepParameter:
    """One `--vary` flag → a SweepParameter.

    PATH=v1,v2,…        values
    PATH=start:stop:step  range (stop included)
    PATH=xFACTOR^STEPS    growth from the scenario's value (STEPS + 1 points)
    """
    usage = ("--vary expects PATH=v1,v2,... or PATH=start:stop:step or PATH=xFACTOR^STEPS "
             "(e.g. workload.global_batch_size=x1.5^5)")
    path, sep, rhs = spec.partition("=")
    path, rhs = path.strip(), rhs.strip()
    if not sep or not path or not rhs:
        raise SweepUsageError(f"{usage}; got '{spec}'")
    try:
        if m := re.fullmatch(rf"x({_NUMBER})\^(\d+)", rhs):
            return SweepParameter(path=path, growth=SweepGrowth(factor=float(m[1]), steps=int(m[2])))
        if re.fullmatch(rf"{_NUMBER}:{_NUMBER}:{_NUMBER}", rhs):
            start, stop, step = (float(x) for x in rhs.split(":"))
            return SweepParameter(path=path, range=SweepRange(start=start, stop=stop, step=step))
        if re.fullmatch(rf"{_NUMBER}(,{_NUMBER})*", rhs):
            return SweepParameter(path=path, values=[float(x) for x in rhs.split(",")])
    except ValidationError as exc:
        reason = "; ".join(e["msg"] for e in exc.errors(include_url=False))
        raise SweepUsageError(f"--vary {spec}: {reason}") from None
    raise SweepUsageError(f"{usage}; got '{spec}'")


# --------------------------------------------------------------------------------- the plan


@dataclass
class SweepPlan:
    """Everything needed to run a sweep: the axes, one task dict per point, and the sweep's hash."""

    scenario_name: str
    axes: list[Axis]
    combine: str
    tasks: list[dict]  # {"index", "values", "labels", "scenario", "catalog_files", "time_limit_s"}
    sweep_hash: str
    notes: list[str] = field(default_factory=list)

    @property
    def one_dimensional(self) -> bool:
        return len(self.axes) == 1 or self.combine == "zip"


def _base_dict(ls: LoadedScenario) -> dict:
    data = ls.scenario.model_dump(mode="json")
    data.pop("sweep", None)
    data["top_k"] = 1
    data["catalog"] = []  # the merged catalog's files travel with each task instead
    return data


def _apply_model(data: dict, named: NamedModel) -> None:
    data["workload"]["model"] = named.model.model_dump(mode="json")
    if named.global_batch_size is not None:
        data["workload"]["global_batch_size"] = named.global_batch_size
    if named.step_time_s is not None:
        data["target"] = {"step_time_s": named.step_time_s}


def _combinations(axes: list[Axis], combine: str) -> list[tuple]:
    if combine == "zip":
        return list(zip(*(a.values for a in axes)))
    return list(itertools.product(*(a.values for a in axes)))


def plan_sweep(ls: LoadedScenario, cat: LoadedCatalog, vary: Optional[list[str]] = None,
               combine: Optional[str] = None, time_limit_s: Optional[float] = None) -> SweepPlan:
    """Build and validate every point. `vary` flags replace the scenario's `sweep:` block."""
    doc = ls.doc
    base = _base_dict(ls)
    if vary:
        sweep = Sweep(combine=combine or "product", parameters=[parse_vary(v) for v in vary])
        locs = [() for _ in sweep.parameters]
    else:
        sweep = ls.scenario.sweep
        if combine:
            sweep = sweep.model_copy(update={"combine": combine})
        locs = [("sweep", "parameters", i) for i in range(len(sweep.parameters))]
    if not sweep.parameters and not sweep.models:
        raise SweepUsageError(f"{doc.path}: nothing to sweep: add a `sweep:` block (parameters or models) or give --vary PATH=SPEC")
    axes = _axes(sweep, base, locs, doc)
    combos = _check_size(axes, sweep.combine, doc, bool(vary))
    catalog_files = [path for path, _ in cat.files]
    tasks, problems = [], []
    for index, combo in enumerate(combos):
        data = copy.deepcopy(base)
        values, labels = {}, {}
        for axis, value in zip(axes, combo):  # the model axis comes first, so fields can override it
            if axis.kind == "model":
                _apply_model(data, value)
                values[MODEL_AXIS] = value.name
            else:
                _set(data, axis.name, value)
                values[axis.name] = value
            labels[axis.name] = axis.label(value)
        problem = _check_point(data, cat, doc, axes, labels, bool(vary))
        if problem:
            problems.append(problem)
            continue
        tasks.append({"index": index, "values": values, "labels": labels, "scenario": data,
                      "catalog_files": catalog_files, "time_limit_s": time_limit_s})
    if problems:
        if vary:
            raise SweepUsageError("; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""))
        raise InputError(problems[:20])
    notes = [f"{a.name} is an integer field: values rounded to the nearest integer "
             f"({', '.join(a.label(v) for v in a.values)})" for a in axes if a.rounded]
    digest = _hash(tasks, cat)
    return SweepPlan(ls.scenario.name, axes, sweep.combine, tasks, digest, notes)


def _axes(sweep: Sweep, base: dict, locs: list, doc: Document) -> list[Axis]:
    axes, problems = [], []
    if sweep.models:
        axes.append(Axis(MODEL_AXIS, list(sweep.models), ("sweep", "models"), "model"))
    seen = set()
    for param, loc in zip(sweep.parameters, locs):
        try:
            if param.path in seen:
                raise ValueError(f"{param.path} is swept twice")
            seen.add(param.path)
            axes.append(make_axis(param, base, loc))
        except ValueError as exc:
            if not loc:
                raise SweepUsageError(f"--vary {param.path}: {exc}") from None
            problems.append(doc.problem(loc + ("path",), str(exc), param.path))
    if problems:
        raise InputError(problems)
    return axes


def _check_size(axes: list[Axis], combine: str, doc: Document, from_flags: bool) -> list[tuple]:
    if combine == "zip" and len({len(a.values) for a in axes}) > 1:
        sizes = ", ".join(f"{a.name}: {len(a.values)}" for a in axes)
        message = f"combine: zip needs the same number of values on every axis ({sizes}); use product or match the lengths"
        if from_flags:
            raise SweepUsageError(message)
        raise InputError([doc.problem(("sweep", "combine"), message)])
    count = math.prod(len(a.values) for a in axes) if combine == "product" else len(axes[0].values)
    if count > MAX_POINTS:
        message = f"the sweep has {count:,} points; the limit is {MAX_POINTS:,}"
        if from_flags:
            raise SweepUsageError(message)
        raise InputError([doc.problem(("sweep",), message)])
    return _combinations(axes, combine)


def _check_point(data: dict, cat: LoadedCatalog, doc: Document, axes: list[Axis], labels: dict, from_flags: bool):
    """None if the point is a valid scenario; else a Problem at the sweep parameter (or a flag message)."""
    from . import loading

    where = ", ".join(f"{k}={v}" for k, v in labels.items())
    try:
        point = loading.load_scenario(data, display="<sweep point>")
        loading.check_against_catalog(point, cat)
        return None
    except InputError as exc:
        first = exc.problems[0]
        reason = f"the point {where} is not a valid scenario: {first.path}: {first.message}"
    if from_flags:
        return reason
    blamed = next((a for a in axes if a.kind != "model" and first.path.startswith(a.name)), None)
    loc = blamed.loc if blamed else ("sweep",)
    return doc.problem(loc, reason)


def _hash(tasks: list[dict], cat: LoadedCatalog) -> str:
    """Identifies a sweep: its point scenarios, the catalog contents and the time limit."""
    payload = {"points": [{"values": t["values"], "scenario": t["scenario"], "time_limit_s": t["time_limit_s"]} for t in tasks],
               "catalog_sha256": [sha for _, sha in cat.files]}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------ one point


@lru_cache(maxsize=4)
def _catalog(files: tuple) -> LoadedCatalog:
    from . import loading

    return loading.load_catalog(list(files))


def solve_point(task: dict) -> dict:
    """Solve one point (module level and dict-in/dict-out, so it pickles to any worker)."""
    from . import api

    start = time.perf_counter()
    row = {"index": task["index"], "values": task["values"], "labels": task["labels"]}
    try:
        cat = _catalog(tuple(task["catalog_files"]))
        result = api.solve(task["scenario"], cat, top_k=1, time_limit_s=task.get("time_limit_s"))
        if result.designs:
            row.update(status=result.status, reason=None, **point_summary(result.designs[0].to_dict(), task["scenario"]))
        else:
            row.update(status="infeasible", reason=result.explanation)
    except api.SolverFailure as exc:
        row.update(status="error", reason=f"solver failure: {exc}")
    except Exception as exc:  # noqa: BLE001 - a failing point is recorded and the others go on
        row.update(status="error", reason=f"{type(exc).__name__}: {exc}")
    row["wall_s"] = time.perf_counter() - start
    return row


def point_summary(design: dict, scenario: dict) -> dict:
    """The per-point numbers the sweep reports, including the cost per unit of work.

    tokens_per_step  = B · s
    throughput       = tokens_per_step / T_step                      (tokens/s at the achieved step time)
    capex_usd_per_pflop_s      = capex / (F_model / T_step / 1e15)   ($ per sustained model PFLOP/s)
    tco_usd_per_million_tokens = TCO / (throughput · years · 365.25 · 86400 / 1e6)
                                 (every hour of the TCO period spent training)
    """
    wl = scenario["workload"]
    tokens_per_step = wl["global_batch_size"] * wl["model"]["seq_len"]
    step_s = design["step_time_s"]
    model_flops = design["flops_per_step"]["model"]
    years = scenario.get("tco", {}).get("years", 5.0)
    fab = design["fabric"]
    switches = fab["leaf_switches"] + fab["spine_switches"] + fab["core_switches"]
    tokens_per_s = tokens_per_step / step_s
    return {
        "architecture": design["architecture"],
        "platform": design["platform"],
        "gpus": design["gpus"],
        "nodes": design["nodes"],
        "racks": design["racks"],
        "switches": switches,
        "step_time_s": step_s,
        "target_step_time_s": design["target_step_time_s"],
        "mfu": design["mfu"],
        "capex_usd": design["capex_usd"],
        "tco_usd": design["tco_usd"],
        "tokens_per_step": tokens_per_step,
        "model_flops_per_step": model_flops,
        "capex_usd_per_pflop_s": design["capex_usd"] / (model_flops / step_s / 1e15),
        "tco_usd_per_million_tokens": design["tco_usd"] / (tokens_per_s * years * SECONDS_PER_YEAR / 1e6),
        "design": design,
    }


# ------------------------------------------------------------------------------- execution


def results_path_for(json_path: str | Path) -> Path:
    """The JSONL file of finished points, next to the sweep's JSON output."""
    p = Path(json_path)
    return p.with_name(p.stem + ".points.jsonl")


def read_results(path: Path, sweep_hash: str) -> dict[int, dict]:
    """Finished points of an earlier run of the same sweep (a torn last line is ignored)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        return {}
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError:
        header = {}
    if header.get("sweep_hash") != sweep_hash:
        raise SweepUsageError(f"{path} belongs to a different sweep (hash {header.get('sweep_hash')!r}, this sweep is "
                              f"{sweep_hash!r}): delete it, or run without --resume to start over")
    done = {}
    for line in lines[1:]:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # the line being written when the run stopped
        if row.get("status") != "error":  # failed points are tried again
            done[row["index"]] = row
    return done


def _append(path: Path, row: dict) -> None:
    from .report_json import _clean

    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(_clean(row), allow_nan=False, separators=(",", ":")) + "\n")
        fh.flush()


def run_points(plan: SweepPlan, jobs: int = 1, executor: str = "local", results_path: Optional[Path] = None,
               resume: bool = False, on_result: Optional[Callable[[dict], None]] = None) -> list[dict]:
    """Solve every point of `plan`; return one row per point in point order.

    `executor`: "local" (serial when jobs = 1, else a spawn ProcessPoolExecutor of `jobs` workers) or
    "dask://HOST:PORT" (an existing distributed scheduler). Finished rows are appended to
    `results_path` as they arrive; with `resume`, rows already there are reused.
    """
    done: dict[int, dict] = {}
    if results_path is not None:
        results_path = Path(results_path)
        if resume and results_path.exists():
            done = read_results(results_path, plan.sweep_hash)
        _rewrite(results_path, plan, done)
    todo = [t for t in plan.tasks if t["index"] not in done]

    def finished(row: dict) -> None:
        done[row["index"]] = row
        if results_path is not None:
            _append(results_path, row)
        if on_result is not None:
            on_result(row)

    for row in list(done.values()):
        if on_result is not None:
            on_result(row)
    if executor.startswith("dask://"):
        _run_dask(todo, executor[len("dask://"):], finished)
    elif executor != "local":
        raise SweepUsageError(f"--executor must be local or dask://HOST:PORT (got '{executor}')")
    elif jobs <= 1 or len(todo) <= 1:
        for task in todo:
            finished(solve_point(task))
    else:
        _run_pool(todo, jobs, finished)
    return [done[t["index"]] for t in plan.tasks]


def _rewrite(path: Path, plan: SweepPlan, done: dict[int, dict]) -> None:
    """Start the results file: a header naming the sweep, then the rows being kept (atomically)."""
    from .report_json import _clean, atomic_path

    header = {"schema": SCHEMA + "+points", "scenario": plan.scenario_name, "sweep_hash": plan.sweep_hash,
              "points": len(plan.tasks)}
    lines = [json.dumps(header)] + [json.dumps(_clean(done[i]), allow_nan=False, separators=(",", ":")) for i in sorted(done)]
    with atomic_path(path) as tmp:
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _run_pool(tasks: list[dict], jobs: int, finished: Callable[[dict], None]) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(solve_point, t) for t in tasks]
        try:
            for fut in as_completed(futures):
                finished(fut.result())
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def _run_dask(tasks: list[dict], address: str, finished: Callable[[dict], None]) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise SweepUsageError("--executor dask://… needs Dask: pip install 'fabricplan[dask]'") from None
    if not re.fullmatch(r"[^\s:/]+:\d+", address):
        raise SweepUsageError(f"--executor expects dask://HOST:PORT (got 'dask://{address}')")
    try:
        client = Client(f"tcp://{address}", timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise SweepUsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        futures = client.map(solve_point, tasks, pure=False)
        for fut in as_completed(futures):
            finished(fut.result())
    finally:
        client.close()


# ---------------------------------------------------------------------------------- results


def switch_points(rows: list[dict]) -> list[dict]:
    """Consecutive solved points (in point order) whose best architecture differs."""
    solved = [r for r in rows if r.get("architecture")]
    return [{"index": b["index"], "labels": b["labels"], "from": a["architecture"], "to": b["architecture"],
             "after_index": a["index"]}
            for a, b in zip(solved, solved[1:]) if a["architecture"] != b["architecture"]]


def increments(rows: list[dict]) -> list[dict]:
    """What to add between consecutive solved points that keep the same architecture.

    added_x = x_i − x_(i−1) for GPUs, nodes, switches and racks; capex_delta_usd likewise.
    """
    out = []
    for a, b in zip(rows, rows[1:]):
        if not (a.get("architecture") and b.get("architecture")) or a["architecture"] != b["architecture"]:
            continue
        out.append({"from_index": a["index"], "to_index": b["index"], "labels": b["labels"],
                    "architecture": b["architecture"],
                    "added_gpus": b["gpus"] - a["gpus"], "added_nodes": b["nodes"] - a["nodes"],
                    "added_switches": b["switches"] - a["switches"], "added_racks": b["racks"] - a["racks"],
                    "capex_delta_usd": b["capex_usd"] - a["capex_usd"]})
    return out


def sweep_report(plan: SweepPlan, rows: list[dict]) -> dict:
    """The sweep's JSON document (`"schema": "fabricplan.sweep/1"`)."""
    counts = {s: sum(1 for r in rows if r["status"] == s) for s in ("optimal", "feasible", "infeasible", "error")}
    return {
        "schema": SCHEMA,
        "scenario": plan.scenario_name,
        "sweep_hash": plan.sweep_hash,
        "combine": plan.combine,
        "axes": [{"name": a.name, "kind": a.kind, "values": [a.label(v) if a.kind == "model" else v for v in a.values],
                  "rounded_to_int": a.rounded} for a in plan.axes],
        "notes": plan.notes,
        "status_counts": counts,
        "cost_per_unit_definitions": {
            "capex_usd_per_pflop_s": "capex / (model FLOPs per step / achieved step time / 1e15)",
            "tco_usd_per_million_tokens": "TCO / (tokens per second · tco.years · 365.25 · 86400 / 1e6), training all the time",
        },
        "points": rows,
        "switch_points": switch_points(rows),
        "increments": increments(rows) if plan.one_dimensional else [],
    }


def point_label(row: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in row["labels"].items())


# --------------------------------------------------------------------------------- terminal


def _usd(value) -> str:
    return "—" if value is None else f"${value:,.0f}"


def sweep_table(report: dict):
    from rich.table import Table

    t = Table(title=f"{report['scenario']}: sweep of {len(report['points'])} point(s)", title_justify="left")
    names = [a["name"] for a in report["axes"]]
    for name in names:
        t.add_column(name, justify="right")
    for col in ("status", "architecture", "GPUs", "nodes", "step s", "MFU", "capex", "TCO", "$/PFLOP/s", "TCO $/Mtok"):
        t.add_column(col, justify="left" if col in ("status", "architecture") else "right")
    for r in report["points"]:
        cells = [r["labels"].get(n, "") for n in names]
        if r.get("architecture"):
            cells += [r["status"], r["architecture"], f"{r['gpus']:,}", f"{r['nodes']:,}",
                      f"{r['step_time_s']:.2f} / {r['target_step_time_s']:.2f}", f"{r['mfu']:.1%}", _usd(r["capex_usd"]),
                      _usd(r["tco_usd"]), _usd(r["capex_usd_per_pflop_s"]), f"${r['tco_usd_per_million_tokens']:,.2f}"]
        else:
            cells += [f"[red]{r['status']}[/]", (r.get("reason") or "")[:80]] + [""] * 8
        t.add_row(*cells)
    return t


def print_report(report: dict, console) -> None:
    console.print(sweep_table(report))
    for s in report["switch_points"]:
        console.print(f"switch point at {', '.join(f'{k}={v}' for k, v in s['labels'].items())}: "
                      f"{s['from']} → [bold]{s['to']}[/]")
    if not report["switch_points"]:
        console.print("no switch point: the best architecture is the same at every solved point")
    for inc in report["increments"]:
        console.print(f"to {', '.join(f'{k}={v}' for k, v in inc['labels'].items())}: add {inc['added_gpus']:,} GPUs, "
                      f"{inc['added_nodes']:,} nodes, {inc['added_switches']:,} switches, {inc['added_racks']:,} racks "
                      f"({_usd(inc['capex_delta_usd'])})")
    for r in report["points"]:
        if r["status"] in ("infeasible", "error"):
            console.print(f"[yellow]point {r['index']}[/] ({point_label(r)}) {r['status']}: {r.get('reason')}")


# ------------------------------------------------------------------------------------ Excel


SHEET_COLUMNS = (("point", None), ("status", None), ("architecture", None), ("GPUs", "#,##0"), ("nodes", "#,##0"),
                 ("switches", "#,##0"), ("racks", "#,##0"), ("step time (s)", "0.00"), ("MFU", "0.0%"),
                 ("capex (USD)", '"$"#,##0'), ("TCO (USD)", '"$"#,##0'), ("capex per PFLOP/s (USD)", '"$"#,##0'),
                 ("TCO per M tokens (USD)", '"$"#,##0.00'), ("switch point", None), ("capex at switch (USD)", '"$"#,##0'))


def write_workbook(report: dict, path: str | Path) -> Path:
    """An .xlsx with a `Sweep` sheet: one row per point, line charts of capex and GPUs, switch points marked."""
    from openpyxl import Workbook

    from .report_json import atomic_path

    wb = Workbook()
    ws = wb.active
    ws.title = "Sweep"
    add_sweep_sheet(ws, report)
    with atomic_path(path) as tmp:
        wb.save(tmp)
    return Path(path)


def add_sweep_sheet(ws, report: dict) -> None:
    """Fill `ws` (an openpyxl worksheet) with the sweep table and its charts."""
    from openpyxl.styles import Font

    from .report_excel import put  # strings always stored as text, never formulas

    axis_names = [a["name"] for a in report["axes"]]
    headers = axis_names + [c for c, _ in SHEET_COLUMNS]
    for col, h in enumerate(headers, 1):
        put(ws, 1, col, h)
    for cell in ws[1]:
        cell.font = Font(bold=True)
    switch_at = {s["index"]: f"{s['from']} → {s['to']}" for s in report["switch_points"]}
    for row_index, r in enumerate(report["points"], 2):
        swept = [r["values"].get(n) for n in axis_names]
        solved = bool(r.get("architecture"))
        get = (lambda k: r.get(k)) if solved else (lambda k: None)
        row = swept + [point_label(r), r["status"], r.get("architecture") or r.get("reason"), get("gpus"), get("nodes"),
                       get("switches"), get("racks"), get("step_time_s"), get("mfu"), get("capex_usd"), get("tco_usd"),
                       get("capex_usd_per_pflop_s"), get("tco_usd_per_million_tokens"), switch_at.get(r["index"]),
                       get("capex_usd") if r["index"] in switch_at else None]
        for col, value in enumerate(row, 1):
            put(ws, row_index, col, value)
    first = len(axis_names)
    for offset, (_, fmt) in enumerate(SHEET_COLUMNS):
        if fmt:
            for cells in ws.iter_rows(min_row=2, min_col=first + offset + 1, max_col=first + offset + 1):
                cells[0].number_format = fmt
    for i, width in enumerate([16] * len(axis_names) + [28, 10, 44, 10, 10, 10, 8, 12, 8, 16, 16, 18, 16, 44, 18], start=1):
        ws.column_dimensions[_col(i)].width = width
    ws.freeze_panes = "A2"
    _charts(ws, report, first)


def _col(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(index)


def _charts(ws, report: dict, first: int) -> None:
    """Two native line charts against the swept value; switch points as a marker-only series."""
    from openpyxl.chart import LineChart, Reference

    n = len(report["points"])
    if n == 0:
        return
    headers = [c for c, _ in SHEET_COLUMNS]
    col_of = {h: first + i + 1 for i, h in enumerate(headers)}
    # x labels: the swept value for a one-axis sweep, else the point label
    x_col = 1 if len(report["axes"]) == 1 else col_of["point"]
    cats = Reference(ws, min_col=x_col, min_row=2, max_row=n + 1)
    x_title = report["axes"][0]["name"] if len(report["axes"]) == 1 else "point"
    specs = (("Capex against the swept value", ("capex (USD)", "capex at switch (USD)"), "capex (USD)", "H2"),
             ("GPUs against the swept value", ("GPUs",), "GPUs", "H20"))
    for title, cols, y_title, anchor in specs:
        chart = LineChart()
        chart.title, chart.y_axis.title, chart.x_axis.title = title, y_title, x_title
        chart.height, chart.width = 8, 16
        chart.display_blanks = "gap"
        for name in cols:
            chart.add_data(Reference(ws, min_col=col_of[name], min_row=1, max_row=n + 1), titles_from_data=True)
        chart.set_categories(cats)
        for series in chart.series:
            series.marker.symbol = "circle"
        if len(chart.series) > 1:  # the switch-point series: big diamonds, no line
            marks = chart.series[1]
            marks.marker.symbol, marks.marker.size = "diamond", 10
            marks.graphicalProperties.line.noFill = True
        ws.add_chart(chart, _col(len(report["axes"]) + len(SHEET_COLUMNS) + 2) + anchor[1:])


# -------------------------------------------------------------------------------------- CLI


def run_cli(args, out, err) -> int:
    """`fabricplan sweep`: plan, run with a progress bar, print the table, write JSON, workbook and plot.

    Exit codes: 0 every point solved; 1 some points infeasible; 3 some points failed; 2 bad input.
    """
    from . import api
    from .cli import EXIT_INFEASIBLE, EXIT_OK, EXIT_SOLVER, UsageError
    from .report_json import check_writable, write_json

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.time_limit is not None and args.time_limit <= 0:
        raise UsageError("--time-limit must be positive")
    try:
        ls = api.load_scenario(args.scenario)
        cat = api.catalog_for(ls, list(args.catalog) if args.catalog else None)
        plan = plan_sweep(ls, cat, args.vary, args.combine, args.time_limit)
        name = ls.scenario.name
        json_path = check_writable(args.json or Path("outputs") / f"{name}-sweep.json")
        xlsx_path = check_writable(args.xlsx or Path("outputs") / f"{name}-sweep.xlsx")
        plot_path = check_writable(args.plot or Path("outputs") / f"{name}-sweep.png")
        for note in plan.notes:
            err.print(f"note: {note}")
        rows = _run_with_progress(plan, args, results_path_for(json_path), err)
    except SweepUsageError as exc:
        raise UsageError(str(exc)) from None
    report = sweep_report(plan, rows)
    print_report(report, out)
    write_json(report, json_path)
    write_workbook(report, xlsx_path)
    from .report_plot import write_plot

    write_plot(report, plot_path)
    out.print(f"wrote {json_path}, {xlsx_path}, {plot_path} (finished points in {results_path_for(json_path)})")
    counts = report["status_counts"]
    if counts["error"]:
        return EXIT_SOLVER
    return EXIT_INFEASIBLE if counts["infeasible"] else EXIT_OK


def _run_with_progress(plan: SweepPlan, args, results_path: Path, err) -> list[dict]:
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    columns = (SpinnerColumn(), TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("ETA"), TimeRemainingColumn())
    where = args.executor if args.executor != "local" else f"{args.jobs} local worker(s)"
    err.print(f"{len(plan.tasks)} point(s) on {where}; results file {results_path}")
    if args.resume and results_path.exists():
        kept = len(read_results(results_path, plan.sweep_hash))
        err.print(f"resuming: {kept} of {len(plan.tasks)} point(s) already done, {len(plan.tasks) - kept} to solve")
    with Progress(*columns, console=err, transient=False) as progress:
        bar = progress.add_task("sweep", total=len(plan.tasks))
        rows = run_points(plan, args.jobs or 1, args.executor, results_path, args.resume,
                          on_result=lambda row: progress.advance(bar))
    return rows
