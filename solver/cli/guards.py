"""Guards of the command line (issue 27): standard streams that are closed, full or broken; output
paths that are inputs or each other; warnings that a time limit left an answer unproven, or that a
scenario's catalog file overrides a --catalog file. solver/cli/__init__.py calls these; they hold no command."""
from __future__ import annotations

import contextlib
import sys

from ..errors import OutputWriteError, UsageError
from ..reports.text import safe


def closed_streams(args) -> None:
    """A closed standard output or error (`>&-`) becomes the null device, so terminal text is dropped;
    JSON meant for standard output cannot be: that is an error before any work."""
    import os

    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the life of the process
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the life of the process
        if getattr(args, "json", None) in ("-", True):
            raise UsageError("standard output is closed, so the JSON cannot be written there; give --json FILE "
                             "(or open standard output)")


class Stdout:
    """The process's standard output, whose write failures (a full device, a closed pipe) are an
    `OutputWriteError` naming it (exit 2) instead of an internal error."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._failed(exc) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise self._failed(exc) from exc

    def __getattr__(self, name: str):
        return getattr(self._stream, name)

    def _failed(self, exc: OSError) -> OutputWriteError:
        import os

        with contextlib.suppress(OSError, ValueError, AttributeError):  # the final flush must not fail again
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
        return OutputWriteError("standard output", exc)


def warn_scenario_over_flags(args, ls, overridden: list[str], err) -> None:
    """A scenario's `catalog:` file is layered after the --catalog files: say so when it overrides
    an entry a --catalog file gave (a quote silently losing to another one, issue 27)."""
    flags = [str(p) for p in (getattr(args, "catalog", None) or [])]
    for line in overridden:
        for mine in (str(p) for p in ls.catalog_paths):
            for flag in flags:
                if f": {mine} overrides {flag}" in line:
                    err.print(safe(f"warning: {line.split(':')[0]}: the scenario's catalog file {mine} overrides the "
                                   f"--catalog file {flag} (the scenario's catalog: list is layered last)"),
                              highlight=False)


def check_outputs_of(loaded: list, **paths) -> None:
    """No output may be an input file of the run (scenarios, catalogs, quotes) or another output."""
    from ..files import check_outputs
    from ..inputs import provenance

    inputs = [f for ls, cat in loaded for f in [ls.doc.path, *(p for p, _ in provenance(cat).files)]]
    check_outputs({"--" + flag.replace("_", "-") if flag != "results" else "the results file": path
                   for flag, path in paths.items()}, inputs)


def warn_status(result, err, who: str = "") -> None:
    """A visible warning on the terminal when a time limit left the answer unproven (statuses
    `feasible` and `time_limit`), for every command that solves; `who` names the scenario."""
    found = len(result.designs)
    proven = (result.stats.get("search") or {}).get("designs_proven", 0)
    prefix = f"warning: {who}: " if who else "warning: "
    if result.status == "feasible":
        err.print(safe(prefix + "the time limit stopped the search; the design(s) may not be optimal "
                       "(feasible, not proven; status feasible)"))
    elif result.status == "time_limit":
        doubt = "the design(s) may not be optimal" if proven < found else "more designs may exist"
        err.print(safe(prefix + f"{doubt} (status time_limit): {result.warnings[0] if result.warnings else ''}"))
