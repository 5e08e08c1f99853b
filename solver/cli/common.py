"""What the commands of solver/cli/__init__.py, cli/sweep.py and cli/plan.py share: the exit codes, loading a
scenario with its catalog and warnings, the output paths and the JSON writer."""
from __future__ import annotations

import gc
import sys
from pathlib import Path

from ..errors import UsageError
from ..reports.text import safe
from .guards import warn_scenario_over_flags

EXIT_OK, EXIT_INFEASIBLE, EXIT_INPUT, EXIT_SOLVER, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def say_written(outputs, out) -> None:
    """Name the files a committed output set wrote and the stale companions it removed."""
    if not outputs.committed and not outputs.removed:
        return  # the JSON went to standard output
    text = f"wrote {', '.join(str(p) for p in outputs.committed)}"
    if outputs.removed:
        text += f"; removed {', '.join(str(p) for p in outputs.removed)} (an earlier run's, which this one replaces)"
    out.print(safe(text))


def check_time_limit_arg(seconds: float | None) -> None:
    """--time-limit is a positive, finite number of seconds (argparse takes "nan" and "inf")."""
    from ..optimize.solve import check_time_limit

    check_time_limit(seconds)


def catalog_paths_of_args(args) -> list:
    """The catalog files of the command line, the shipped default first unless --no-default-catalog."""
    from ..inputs.catalog import layered_paths

    return layered_paths(getattr(args, "catalog", None), not getattr(args, "no_default_catalog", False))


def catalog_of_args(args, ls):
    """The catalog of a command: --catalog files and the scenario's `catalog:` list over the shipped one (unless --no-default-catalog)."""
    from .. import api

    if getattr(args, "no_default_catalog", False) and not args.catalog and not ls.catalog_paths:
        raise UsageError("--no-default-catalog needs a --catalog file (or a catalog: list in the scenario)")
    return api.catalog_for(ls, getattr(args, "catalog", None), not getattr(args, "no_default_catalog", False))


_collector_held = False


def hold_collector() -> None:
    """No cyclic garbage collection during the console entry's start-up (`cli.run`), until the command's inputs are
    loaded (`release_collector`). The imports and the loading make some 10^5 objects that live until the process
    ends; the collector's passes over them took about 0.04 s of every command (issue 26, measured on its VM)."""
    global _collector_held
    _collector_held = True
    gc.disable()


def release_collector() -> None:
    """Collect again from here on, over the objects made from now on: those of the start-up are frozen
    (`gc.freeze`), as they live until the process ends. Nothing when `hold_collector` was not called (the library,
    the tests) or the collector is already released."""
    global _collector_held
    if _collector_held:
        _collector_held = False
        gc.freeze()
        gc.enable()


def load_scenario_of_args(args, err, path=None):
    """The scenario of the command line (or `path`) and its catalog; --verbose names the overridden catalog entries."""
    from .. import api
    from ..inputs import provenance

    ls = api.load_scenario(path or args.scenario)
    cat = catalog_of_args(args, ls)
    if args.verbose:
        for line in provenance(cat).overridden:
            err.print(safe(f"override: {line}"))
    warn_scenario_over_flags(args, ls, provenance(cat).overridden, err)
    print_catalog_warnings(cat, err)
    print_warnings(ls, err)
    release_collector()
    return ls, cat


def print_catalog_warnings(cat, err) -> None:
    """Print the catalog's located deprecation warnings (renamed keys, inputs/catalog_compat.py) on the error console."""
    from ..inputs import provenance

    for warning in provenance(cat).deprecations:
        err.print(f"[yellow]warning[/]: {safe(warning)}", highlight=False, soft_wrap=True)


def print_warnings(ls, err) -> None:
    """Print the scenario's plausibility warnings on the error console."""
    from ..inputs.plausibility import plausibility_warnings

    for warning in plausibility_warnings(ls):
        err.print(f"[yellow]warning[/]: {safe(warning)}", highlight=False, soft_wrap=True)


def input_warnings(ls) -> list[str]:
    """The scenario's plausibility warnings (already on stderr), for the JSON and the workbooks."""
    from ..inputs.plausibility import plausibility_warnings

    return plausibility_warnings(ls)


def _output_dir(args) -> Path:
    """Where a run's files go that no flag names: beside --json, else beside --xlsx, else outputs/ (a file of a
    run never strays into outputs/ when its output set was pointed elsewhere; '-' and /dev/null name no folder)."""
    from ..files import is_discard

    for flag in ("json", "xlsx"):
        given = getattr(args, flag, None) if args is not None else None
        if isinstance(given, str) and given and given != "-" and not is_discard(Path(given)):
            return Path(given).parent
    return Path("outputs")


def default_output(name: str, suffix: str, args=None) -> Path:
    """outputs/<name><suffix>, or the same name beside the run's --json or --xlsx (`_output_dir`)."""
    return _output_dir(args) / f"{name}{suffix}"


def json_output_path(args, name: str, suffix: str) -> Path | None:
    """Where the JSON goes: None for '-' (standard output), else a checked, writable path."""
    from ..files import check_writable

    if args.json == "-":
        return None
    return check_writable(args.json or default_output(name, suffix, args))


def write_json_output(data: dict, path: Path | None) -> list[str]:
    """Write the JSON to `path`, or to standard output when None; the names of the files written."""
    from ..reports.json import dumps, write_json

    if path is None:
        sys.stdout.write(dumps(data))
        sys.stdout.flush()
        return []
    write_json(data, path)
    return [str(path)]


def xlsx_output_path(args, name: str, suffix: str) -> Path | None:
    """Where the workbook goes: None with --no-xlsx, else --xlsx or the default output path, checked writable."""
    from ..files import check_writable

    return None if args.no_xlsx else check_writable(args.xlsx or default_output(name, suffix, args))
