"""Measured runs for `fabricplan calibrate` (SPEC §4.8): a CSV or a YAML list → validated, pinned scenarios.

Each CSV column (each key of a YAML run) is a scenario field path (`workload.model.layers`, `pin.tp`, …),
one measured column (`measured_step_time_s` or `measured_tokens_per_s_per_gpu`), or one of the
provenance columns `source` and `note`, which are kept and never fitted on. A run becomes a scenario
validated by the scenario schema; every problem is located at the run's line and the column of the
field (`RunDocument.mark`), so a bad value reads `runs.csv:7:4: pin.tp: ...` like any other input.
"""
from __future__ import annotations

import csv
import difflib
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, Problem
from ..inputs.scenario import LoadedScenario, check_against_catalog
from ..inputs.schema import Catalog, Scenario
from ..inputs.yaml_safe import Document, dotted, model_in, raise_if, read_yaml, validate

MEASURED = ("measured_step_time_s", "measured_tokens_per_s_per_gpu")
PROVENANCE = ("source", "note")
RUN_SECTIONS = ("workload", "pin", "overlap", "efficiency")  # the scenario blocks a run may set
MAX_BYTES = 20_000_000
STACK_PATH = "workload.stack"
DEFAULT_PINS = {"pin.cp": 1, "pin.vp": 1, "pin.microbatch_size": 1}  # tests/perf/calibration_rows.py's rule too


@dataclass
class Cell:
    value: Any
    line: int
    column: int


@dataclass
class RunDocument(Document):
    """One run's scenario as a Document whose locations are the run's cells (file, line, column)."""

    cells: dict[str, Cell] = field(default_factory=dict)
    line: int = 1

    def mark(self, loc) -> tuple[int, int]:
        path = dotted(loc)
        if path in self.cells:
            return self.cells[path].line, self.cells[path].column
        owners = [p for p in self.cells if path.startswith(p + ".")]
        if owners:
            cell = self.cells[max(owners, key=len)]
            return cell.line, cell.column
        under = [c for p, c in self.cells.items() if p.startswith(path + ".") or not path]
        if under:
            return min((c.line, c.column) for c in under)
        return self.line, 1


@dataclass
class Run:
    """One measured run: its validated scenario and what was measured."""

    number: int  # 1-based position in the file
    line: int
    doc: RunDocument
    ls: LoadedScenario
    measured: float  # in the file's measured column's unit
    stack: str | None
    source: str = ""
    note: str = ""

    @property
    def scenario(self) -> Scenario:
        return self.ls.scenario


@dataclass
class RunsFile:
    path: str
    measured_column: str
    runs: list[Run]
    header_line: int = 1
    duplicates: list[tuple[int, int]] = field(default_factory=list)  # (line, line of the same run kept): counted once


def field_paths() -> list[str]:
    """Every scenario field path a run may set (the leaves under RUN_SECTIONS)."""
    out: list[str] = []

    def walk(model, prefix: str) -> None:
        for name, info in model.model_fields.items():
            sub = model_in(info.annotation)
            if sub is not None:
                walk(sub, f"{prefix}.{name}")
            else:
                out.append(f"{prefix}.{name}")

    for section in RUN_SECTIONS:
        model = model_in(Scenario.model_fields[section].annotation)
        if model is not None:
            walk(model, section)
    return out


def _scalar(text: str) -> Any:
    """A CSV cell as a number, a boolean or a word (empty = not given)."""
    t = text.strip()
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", t):
        return float(t)
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    return t


# C0 controls but tab, newline and carriage return; DEL; C1 controls; the Unicode bidirectional marks, embeddings,
# overrides and isolates (they reorder what a terminal or an editor shows): refused anywhere in a runs file
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
MAX_RUNS = 2_000  # rows a runs file may hold (the fit's time grows with them: docs/reliability.md, round 4)
# the physical range of a measured value (outside it the ratio predicted / measured over- or underflows)
MEASURED_RANGE = {"measured_step_time_s": (1e-4, 1e7), "measured_tokens_per_s_per_gpu": (1e-3, 1e8)}


def control_problems(display: str, text: str, limit: int = 20) -> list[Problem]:
    """Each control character of `text` (CONTROL) as a located problem, at most `limit`."""
    problems = []
    for m in CONTROL.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        code = ord(m.group())
        problems.append(Problem(display, line, column, "", f"control character U+{code:04X} in the text: runs files "
                                "hold printable text only (tab and line ends allowed); remove it"))
        if len(problems) == limit:
            break
    return problems


def _fail(path: str, line: int, column: int, where: str, message: str) -> InputError:
    return InputError([Problem(path, line, column, where, message)])


def _read_text(path: Path, display: str) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise _fail(display, 1, 1, "", f"the file is {size:,} bytes; runs files are limited to {MAX_BYTES:,}")
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise _fail(display, 1, 1, "", "file not found: give the path of a CSV or YAML list of runs") from None
    except IsADirectoryError:
        raise _fail(display, 1, 1, "", "is a directory: give the path of a CSV or YAML list of runs") from None
    except UnicodeDecodeError as exc:
        raise _fail(display, 1, 1, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise _fail(display, 1, 1, "", f"cannot read: {exc.strerror or exc}") from None
    problems = control_problems(display, text)
    if problems:
        raise InputError(problems)
    return text


def _csv_records(text: str) -> list[tuple[int, list[str]]]:
    """(line, cells) of every record; blank lines and lines starting with '#' between records are skipped (inside
    a quoted cell such a line is part of the cell)."""
    lines = io.StringIO(text, newline="").readlines()  # line ends \n, \r\n, \r only (not U+2028 or U+0085)
    state = {"next": 0, "start": 1, "between": True}

    def feed():
        while state["next"] < len(lines):
            ln = lines[state["next"]]
            state["next"] += 1
            if state["between"]:
                if not ln.strip() or ln.lstrip().startswith("#"):
                    continue
                state["start"], state["between"] = state["next"], False
            yield ln

    out = []
    for cells in csv.reader(feed()):
        if cells and any(c.strip() for c in cells):
            out.append((state["start"], cells))
        state["between"] = True
    return out


Rows = list[tuple[int, dict[str, Cell]]]


def _csv_cells(display: str, text: str) -> tuple[Rows, int, str]:
    records = _csv_records(text)
    if not records:
        raise _fail(display, 1, 1, "", "no header row: the first row names the columns (scenario field paths, "
                    "one measured column, optional source and note)")
    header_line, header = records[0]
    names = [h.strip() for h in header]
    rows = []
    for line, cells in records[1:]:
        if len(cells) > len(names):
            raise _fail(display, line, len(names) + 1, "", f"{len(cells)} cells for {len(names)} columns: "
                        "quote cells that contain commas")
        rows.append((line, {names[i]: Cell(_scalar(c), line, i + 1) for i, c in enumerate(cells) if c.strip()}))
    column = _check_columns(display, header_line, [(n, header_line, i + 1) for i, n in enumerate(names)])
    return rows, header_line, column


def _flatten(node_doc: Document, item: Any, loc: tuple, prefix: str, out: dict[str, Cell]) -> None:
    for key, value in item.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and path not in MEASURED:
            _flatten(node_doc, value, loc + (key,), path, out)
        else:
            line, col = node_doc.mark(loc + (key,))
            out[path] = Cell(value, line, col)


def _yaml_cells(display: str, path: Path) -> tuple[Rows, int, str]:
    doc = read_yaml(path, display, allow_list=True)
    data = doc.data.get("runs") if isinstance(doc.data, dict) else doc.data
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise _fail(display, 1, 1, "", "a YAML runs file is a list of runs (or `runs:` and that list), each a "
                    "mapping of scenario field paths to values")
    base = ("runs",) if isinstance(doc.data, dict) else ()
    rows, columns = [], []
    for i, item in enumerate(data):
        cells: dict[str, Cell] = {}
        _flatten(doc, item, base + (i,), "", cells)
        line = doc.mark(base + (i,))[0]
        rows.append((line, cells))
        columns += [(p, c.line, c.column) for p, c in cells.items()]
    return rows, 1, _check_columns(display, 1, columns, per_run=True)


def _check_columns(display: str, header_line: int, columns: list[tuple[str, int, int]], per_run: bool = False) -> str:
    """Every column is a field path, a measured column or a provenance column; exactly one measured column
    (its name is returned)."""
    valid = field_paths()
    known = set(valid) | set(MEASURED) | set(PROVENANCE)
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for name, line, col in columns:
        if name not in known:
            close = difflib.get_close_matches(name, valid + list(MEASURED), n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else "columns are scenario field paths such as workload.model.layers or pin.tp"
            problems.append(Problem(display, line, col, name, f"unknown column: {hint}"))
        if not per_run and name in seen:
            problems.append(Problem(display, line, col, name, f"duplicate column (also column {seen[name]}): keep one"))
        seen.setdefault(name, col)
    measured = sorted({n for n, _, _ in columns if n in MEASURED})
    if not measured:
        problems.append(Problem(display, header_line, 1, "", "no measured column: add measured_step_time_s "
                                "(seconds per optimizer step) or measured_tokens_per_s_per_gpu"))
    elif len(measured) > 1:
        problems.append(Problem(display, header_line, 1, "", f"two measured columns ({', '.join(measured)}): keep "
                                "exactly one (convert: tokens/s/GPU = global_batch_size × seq_len / (step × GPUs))"))
    if problems:
        raise InputError(problems)
    return measured[0]


def _nest(cells: dict[str, Cell]) -> dict:
    data: dict = {}
    for path, cell in cells.items():
        if path in MEASURED or path in PROVENANCE:
            continue
        node = data
        *parents, leaf = path.split(".")
        for key in parents:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                break
        else:
            node[leaf] = cell.value
    return data


def _with_defaults(cells: dict[str, Cell], catalog: Catalog, line: int) -> dict[str, Cell]:
    """Pins a run may leave out: cp = vp = microbatch_size = 1; the platform's first NIC at one NIC per GPU
    (its largest rail count); dp from pin.nodes when dp is not given."""
    out = dict(cells)
    for path, value in DEFAULT_PINS.items():
        out.setdefault(path, Cell(value, line, 1))
    plat = catalog.by_id("platforms").get(out["pin.platform"].value) if "pin.platform" in out else None
    if plat is not None:
        out.setdefault("pin.nic", Cell(plat.compatible_nics[0], line, 1))
        out.setdefault("pin.rails_per_node", Cell(max(plat.rails_per_node_options), line, 1))
        nodes = out.get("pin.nodes")
        if "pin.dp" not in out and nodes is not None and isinstance(nodes.value, int):
            per_replica = 1
            for key in ("pin.tp", "pin.cp", "pin.pp"):
                v = out[key].value if key in out else 1
                per_replica *= v if isinstance(v, int) and v > 0 else 1
            out["pin.dp"] = Cell(max(1, nodes.value * plat.gpus_per_node // per_replica), nodes.line, nodes.column)
    return out


def _measured(display: str, cells: dict[str, Cell], column: str, line: int) -> float:
    cell = cells.get(column)
    if cell is None:
        raise _fail(display, line, 1, column, "no measured value in this run: fill the measured column")
    value = cell.value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InputError([Problem(display, cell.line, cell.column, column, "must be a positive number", value, True)])
    low, high = MEASURED_RANGE[column]
    if not low <= value <= high:
        unit = "s per step" if column == "measured_step_time_s" else "tokens/s per GPU"
        raise InputError([Problem(display, cell.line, cell.column, column, f"out of the physical range {low:g}-{high:g} "
                                  f"{unit}: check the value and the column's unit", value, True)])
    return float(value)


def _run(display: str, number: int, line: int, cells: dict[str, Cell], column: str, catalog: Catalog,
         stack: str | None) -> Run:
    cells = _with_defaults(cells, catalog, line)
    if stack is not None and STACK_PATH not in cells:
        cells[STACK_PATH] = Cell(stack, line, 1)  # runs without a stack column are of the --stack named
    data = {"name": f"run-{number}", **_nest(cells), "target": {"step_time_s": 1.0}}
    doc = RunDocument(display, data, None, cells=cells, line=line)
    scenario = validate(doc, Scenario)
    raise_if([doc])
    assert scenario is not None
    ls = LoadedScenario(scenario, doc, [])
    check_against_catalog(ls, catalog)
    meta = {k: str(cells[k].value) for k in PROVENANCE if k in cells}
    return Run(number, line, doc, ls, _measured(display, cells, column, line), ls.scenario.workload.stack, **meta)


def read_runs(path: str | Path, catalog: Catalog, display: str | None = None, stack: str | None = None) -> RunsFile:
    """Read and validate every run of a CSV or YAML runs file against `catalog` (all problems at once);
    runs without a `workload.stack` are of `stack` (else of the scenario default)."""
    p = Path(path)
    name = display or str(path)
    if p.suffix.lower() in (".yaml", ".yml"):
        _read_text(p, name)  # size, encoding and control characters, located (read_yaml reads it again)
        rows, header_line, column = _yaml_cells(name, p)
    else:
        rows, header_line, column = _csv_cells(name, _read_text(p, name))
    if not rows:
        raise _fail(name, header_line, 1, "", "no runs: add one row per measured run under the header")
    if len(rows) > MAX_RUNS:
        raise _fail(name, rows[MAX_RUNS][0], 1, "", f"{len(rows):,} runs: calibrate fits at most {MAX_RUNS:,} per file "
                    "(its time grows with the runs); keep a representative subset, e.g. one stack and GPU per file")
    rows, duplicates = _unique(rows)
    runs: list[Run] = []
    problems: list[Problem] = []
    for number, (line, cells) in enumerate(rows, start=1):
        try:
            runs.append(_run(name, number, line, cells, column, catalog, stack))
        except InputError as exc:
            problems += exc.problems
    if problems:
        raise InputError(problems)
    return RunsFile(name, column, runs, header_line, duplicates)


def _unique(rows: Rows) -> tuple[Rows, list[tuple[int, int]]]:
    """The rows with each repeated run (the same fields and measured value; source and note aside) kept once,
    and (line, line kept) of each repeat: a run counted twice would be its own witness when left out."""
    seen: dict[tuple, int] = {}
    out: Rows = []
    repeats: list[tuple[int, int]] = []
    for line, cells in rows:
        key = tuple(sorted((p, repr(c.value)) for p, c in cells.items() if p not in PROVENANCE))
        if key in seen:
            repeats.append((line, seen[key]))
            continue
        seen[key] = line
        out.append((line, cells))
    return out, repeats
