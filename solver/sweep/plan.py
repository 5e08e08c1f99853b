"""Sweep plans (SPEC §9): a scenario's `sweep:` block or `--vary` flags → one task per point.

A sweep is a list of *points*; each point is the base scenario with some numeric fields replaced
(and optionally a named model shape swapped in). Every point is validated here, before any solve,
and the plan carries a hash of the points and the catalog contents (for `--resume`).
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import InputError, UsageError
from ..inputs.catalog import provenance
from ..inputs.scenario import LoadedScenario
from ..inputs.schema import Catalog, NamedModel, Scenario, Sweep, SweepGrowth, SweepParameter, SweepRange
from ..inputs.yaml_safe import Document

MAX_POINTS = 10_000
MODEL_AXIS = "model"
FORBIDDEN_ROOTS = ("sweep", "top_k")  # a point is solved with top_k = 1 and no sweep block


# ------------------------------------------------------------------------------- field paths


def _leaf_types(annotation) -> set:
    """The scalar types an annotation accepts (Optional, Annotated and Union unwrapped; lists skipped;
    a Literal of words is str)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return {type(arg) for arg in typing.get_args(annotation)}
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


def _submodel(annotation) -> type[BaseModel] | None:
    for leaf in _leaf_types(annotation):
        if isinstance(leaf, type) and issubclass(leaf, BaseModel):
            return leaf
    return None


def field_kind(path: str) -> str:
    """'int' or 'float' for a numeric scenario field at dotted `path`, 'text' for a word or id field
    (workload.precision, constraints.platforms: one value per point); ValueError saying why not."""
    parts = path.split(".")
    if parts[0] in FORBIDDEN_ROOTS:
        raise ValueError(f"'{parts[0]}' cannot be swept")
    cls: type[BaseModel] | None = Scenario
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
        if str in leaves:
            return "text"
        raise ValueError(f"'{path}' is neither a number nor a word")
    raise ValueError("empty path")


def get_path(data: dict, path: str):
    """The value at a dotted `path` (`workload.global_batch_size`) of a scenario's data, or None."""
    node: Any = data
    for key in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def set_path(data: dict, path: str, value) -> None:
    """Set the value at a dotted `path` of a scenario's data, making the dicts on the way."""
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
    kind: str = "float"  # int | float | text | model
    rounded: bool = False  # some values were rounded to integers
    growth: SweepGrowth | None = None  # set when the values grow geometrically (value k = v0 · factor^k)

    def label(self, value) -> str:
        if self.kind == "model":
            return value.name
        if self.kind == "text":
            return str(value)
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
            raise ValueError(descending_range_message(r.start, r.stop, r.step))
        count = math.floor((r.stop - r.start) / r.step * (1 + 1e-9) + 1e-9) + 1
        if count > MAX_POINTS:
            raise ValueError(f"range gives {count:,} values; the limit is {MAX_POINTS:,}")
        return [r.start + i * r.step for i in range(count)]
    start = get_path(base, param.path)
    if not isinstance(start, (int, float)) or isinstance(start, bool):
        raise ValueError(f"growth starts from the scenario's value of {param.path}, which is not set to a number "
                         f"(got {start!r}): set it, or use values or range")
    g = param.growth
    assert g is not None  # SweepParameter._exactly_one
    return [float(start) * g.factor ** k for k in range(g.steps + 1)]


def _text_axis(param: SweepParameter, loc: tuple) -> Axis:
    """A word or id field (precision, platforms) takes a list of values, one per point."""
    if param.values is None:
        raise ValueError(f"{param.path} takes words: list them (values: [bf16, fp8]), not a range or growth")
    return Axis(param.path, [str(v) if not isinstance(v, float) or not v.is_integer() else str(int(v))
                             for v in param.values], loc, "text")


def descending_range_message(start: float, stop: float, step: float) -> str:
    """A range runs upwards; say how to write a downward sweep instead (as a list of values)."""
    step = abs(step) or 1.0
    count = min(6, math.floor(abs(start - stop) / step + 1e-9) + 1)
    values = ",".join(f"{start - i * step:g}" for i in range(count))
    more = ",..." if abs(start - stop) / step + 1e-9 >= count else ""
    return (f"the range {start:g}:{stop:g} runs downwards: a range is start:stop:step with start ≤ stop and a "
            f"positive step; to sweep downwards list the values ({values}{more})")


def make_axis(param: SweepParameter, base: dict, loc: tuple) -> Axis:
    """Check the path and values of one parameter; integer fields get values rounded half up."""
    kind = field_kind(param.path)
    if kind == "text":
        return _text_axis(param, loc)
    if param.values is not None and any(isinstance(v, str) for v in param.values):
        word = next(v for v in param.values if isinstance(v, str))
        raise ValueError(f"{param.path} is a numeric field; '{word}' is not a number")
    raw = parameter_values(param, base)
    rounding = param.round_to_int if param.round_to_int is not None else kind == "int"
    if kind == "int" and not rounding:
        bad = [v for v in raw if v != math.floor(v)]
        if bad:
            raise ValueError(f"{param.path} is an integer field and round_to_int is false, but {bad[0]:g} is not whole")
    values = [int(math.floor(v + 0.5)) for v in raw] if rounding else raw
    rounded = any(abs(v - r) > 1e-9 for v, r in zip(values, raw))
    return Axis(param.path, values, loc, "int" if rounding else "float", rounded, param.growth)


# -------------------------------------------------------------------------------- --vary flags


_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def parse_vary(spec: str) -> SweepParameter:
    """One `--vary` flag → a SweepParameter.

    PATH=v1,v2,…        values (numbers, or words for a word field: workload.precision=bf16,fp8)
    PATH=start:stop:step  range (stop included)
    PATH=xFACTOR^STEPS    growth from the scenario's value (STEPS + 1 points)
    """
    usage = ("--vary expects PATH=v1,v2,... or PATH=start:stop:step or PATH=xFACTOR^STEPS "
             "(e.g. workload.global_batch_size=x1.5^5)")
    path, sep, rhs = spec.partition("=")
    path, rhs = path.strip(), rhs.strip()
    if not sep or not path or not rhs:
        raise UsageError(f"{usage}; got '{spec}'")
    try:
        if m := re.fullmatch(rf"x({_NUMBER})\^(\d+)", rhs):
            return SweepParameter(path=path, growth=SweepGrowth(factor=float(m[1]), steps=int(m[2])))
        if re.fullmatch(rf"{_NUMBER}:{_NUMBER}:{_NUMBER}", rhs):
            start, stop, step = (float(x) for x in rhs.split(":"))
            if stop < start or step <= 0 and stop != start:
                raise UsageError(f"--vary {path}: " + (descending_range_message(start, stop, step) if stop < start else
                                 f"the step of a range must be positive (got {step:g})"))
            return SweepParameter(path=path, range=SweepRange(start=start, stop=stop, step=step))
        if re.fullmatch(rf"{_NUMBER}(,{_NUMBER})*", rhs):
            return SweepParameter(path=path, values=[float(x) for x in rhs.split(",")])
        if re.fullmatch(r"[A-Za-z0-9_.\-]+(,[A-Za-z0-9_.\-]+)*", rhs):  # words: precision, platform ids
            return SweepParameter(path=path, values=list(rhs.split(",")))
    except ValidationError as exc:
        reason = "; ".join(e["msg"] for e in exc.errors(include_url=False))
        raise UsageError(f"--vary {spec}: {reason}") from None
    raise UsageError(f"{usage}; got '{spec}'")


# --------------------------------------------------------------------------------- the plan


@dataclass
class SweepPlan:
    """Everything needed to run a sweep: the axes, one task dict per point, and the sweep's hash."""

    scenario_name: str
    axes: list[Axis]
    combine: str
    tasks: list[dict]  # {"index", "values", "labels", "scenario", "catalog", "time_limit_s"}
    sweep_hash: str
    notes: list[str] = field(default_factory=list)

    @property
    def one_dimensional(self) -> bool:
        return len(self.axes) == 1 or self.combine == "zip"


def _base_dict(ls: LoadedScenario) -> dict:
    data = ls.scenario.model_dump(mode="json")
    data.pop("sweep", None)
    data["top_k"] = 1
    data["catalog"] = []  # the merged catalog's contents travel with each task instead
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


def plan_sweep(ls: LoadedScenario, cat: Catalog, vary: list[str] | None = None,
               combine: str | None = None, time_limit_s: float | None = None) -> SweepPlan:
    """Build and validate every point. `vary` flags replace the scenario's `sweep:` block."""
    doc = ls.doc
    base = _base_dict(ls)
    if vary:
        sweep = Sweep(combine="zip" if combine == "zip" else "product", parameters=[parse_vary(v) for v in vary])
        locs: list[tuple] = [() for _ in sweep.parameters]
    else:
        sweep = ls.scenario.sweep
        if combine:
            sweep = sweep.model_copy(update={"combine": combine})
        locs = [("sweep", "parameters", i) for i in range(len(sweep.parameters))]
    if not sweep.parameters and not sweep.models:
        raise UsageError(f"{doc.path}: nothing to sweep: add a `sweep:` block (parameters or models) or give --vary PATH=SPEC")
    axes = _axes(sweep, base, locs, doc)
    combos = _check_size(axes, sweep.combine, doc, bool(vary))
    shipped = catalog_payload(cat)
    tasks, problems = [], []
    for index, combo in enumerate(combos):
        data = copy.deepcopy(base)
        values, labels = {}, {}
        for axis, value in zip(axes, combo):  # the model axis comes first, so fields can override it
            if axis.kind == "model":
                _apply_model(data, value)
                values[MODEL_AXIS] = value.name
            else:
                set_path(data, axis.name, value)
                values[axis.name] = value
            labels[axis.name] = axis.label(value)
        problem = _check_point(data, cat, doc, axes, labels, bool(vary))
        if problem:
            problems.append(problem)
            continue
        tasks.append({"index": index, "values": values, "labels": labels, "scenario": data,
                      "catalog": shipped, "time_limit_s": time_limit_s})
    if problems:
        if vary:
            raise UsageError("; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""))
        raise InputError(problems[:20])
    notes = [f"{a.name} is an integer field: values rounded to the nearest integer "
             f"({', '.join(a.label(v) for v in a.values)})" for a in axes if a.rounded]
    digest = _hash(tasks, shipped)
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
                raise UsageError(f"--vary {param.path}: {exc}") from None
            problems.append(doc.problem(loc + ("path",), str(exc), param.path))
    if problems:
        raise InputError(problems)
    return axes


def _check_size(axes: list[Axis], combine: str, doc: Document, from_flags: bool) -> list[tuple]:
    if combine == "zip" and len({len(a.values) for a in axes}) > 1:
        sizes = ", ".join(f"{a.name}: {len(a.values)}" for a in axes)
        message = f"combine: zip needs the same number of values on every axis ({sizes}); use product or match the lengths"
        if from_flags:
            raise UsageError(message)
        raise InputError([doc.problem(("sweep", "combine"), message)])
    count = math.prod(len(a.values) for a in axes) if combine == "product" else len(axes[0].values)
    if count > MAX_POINTS:
        message = f"the sweep has {count:,} points; the limit is {MAX_POINTS:,}"
        if from_flags:
            raise UsageError(message)
        raise InputError([doc.problem(("sweep",), message)])
    return _combinations(axes, combine)


def _check_point(data: dict, cat: Catalog, doc: Document, axes: list[Axis], labels: dict, from_flags: bool):
    """None if the point is a valid scenario; else a Problem at the sweep parameter (or a flag message)."""
    from ..inputs.scenario import check_against_catalog, load_scenario

    where = ", ".join(f"{k}={v}" for k, v in labels.items())
    try:
        point = load_scenario(data, display="<sweep point>")
        check_against_catalog(point, cat)
        return None
    except InputError as exc:
        first = exc.problems[0]
        reason = f"the point {where} is not a valid scenario: {first.path}: {first.message}"
    if from_flags:
        return reason
    blamed = next((a for a in axes if a.kind != "model" and first.path.startswith(a.name)), None)
    loc = blamed.loc if blamed else ("sweep",)
    return doc.problem(loc, reason)


def catalog_payload(cat: Catalog) -> dict:
    """The merged catalog as it travels to every worker: its contents (JSON), their SHA-256, and
    the files it came from (for reports). Workers never read catalog files: a relative path, a file
    edited since planning or a worker on another machine cannot change what a point is solved with."""
    data = cat.model_dump(mode="json")
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "data": data,
            "files": [list(f) for f in provenance(cat).files]}


def _hash(tasks: list[dict], shipped: dict) -> str:
    """Identifies a sweep: its point scenarios, the catalog contents and the time limit."""
    payload = {"points": [{"values": t["values"], "scenario": t["scenario"], "time_limit_s": t["time_limit_s"]} for t in tasks],
               "catalog_sha256": shipped["sha256"]}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]

