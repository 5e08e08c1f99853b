"""Every error fabricplan raises on purpose, in one place, with the exit code the CLI maps it to.

| error | meaning | exit |
|---|---|---|
| `InputError` | invalid input: one or more `Problem`s, each with file, line, column, field and a fix | 2 |
| `UsageError` | a bad command-line flag or combination (no file:line to point at) | 2 |
| `OutputError` | an output path that cannot be written (checked before any solving starts) | 2 |
| `OutputWriteError` | an output that failed while written (full disk, closed standard output); an OSError too | 2 |
| `CatalogCannotBuild` | the catalog cannot build a design (no link reaches, a unit does not fit a rack) | 2 |
| `SolverFailure` | the solver returned no design and did not prove infeasibility | 3 |
| `ConsistencyError` | the evaluator disagrees with the optimisation model: a bug, never a user error | 3 |

Anything else that escapes is an internal error (exit 3, "rerun with --debug").
"""
from __future__ import annotations

import reprlib
from dataclasses import dataclass
from typing import Any

_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict, _REPR.maxlevel = 60, 60, 6, 6, 3


def show_value(value: Any) -> str:
    """A short, bounded rendering of an input value (reprlib never walks a whole aliased tree)."""
    text = _REPR.repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class Problem:
    """One located input problem: ``FILE:LINE:COL: field.path: message (got VALUE)``."""

    file: str
    line: int
    column: int
    path: str
    message: str
    got: Any = None
    has_got: bool = False

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}: "
        field_path = f"{self.path}: " if self.path else ""
        got = f" (got {show_value(self.got)})" if self.has_got else ""
        return f"{where}{field_path}{self.message}{got}"


class InputError(Exception):
    """Invalid input: one or more problems, each with file, line, field and a fix."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class UsageError(Exception):
    """A bad command-line flag or flag combination."""


class OutputError(Exception):
    """An output path that cannot be written (checked before any solving starts)."""


class OutputWriteError(OutputError, OSError):
    """An output (a file, or standard output) that failed while being written — a full disk, a closed
    pipe: an `OutputError` (exit 2) naming the output, and still the `OSError` it was."""

    def __init__(self, target: str, exc: OSError):
        OSError.__init__(self, exc.errno, exc.strerror or str(exc))
        self.target = target

    def __str__(self) -> str:
        return f"{self.target}: cannot write: {self.strerror}"


class CatalogCannotBuild(ValueError):
    """The catalog cannot build a design: no link option reaches, a unit does not fit in the rack,
    a NIC or rail count the platform does not take, a missing rack. Raised by fabric sizing and
    costing; the API turns it into an `InputError` located at the pin or the facility."""


class SolverFailure(RuntimeError):
    """The solver returned no design and did not prove infeasibility (exit code 3)."""


class ConsistencyError(RuntimeError):
    """The evaluator disagrees with the optimisation model: a bug, never a user error."""
