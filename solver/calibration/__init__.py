"""`fabricplan calibrate` (SPEC §4.8): a buyer's measured runs → fitted parameters as a catalog overlay.

    result = calibrate("runs.csv", catalog, stack="megatron")
    print(result.overlay_yaml())        # what `--catalog` layers over the shipped catalog

runs.py reads and validates the runs, fit.py fits, fitted.py holds what was fitted, overlay.py writes the overlay, table.py prints.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import InputError, Problem
from ..inputs.catalog import provenance
from ..inputs.schema import Catalog
from ..inputs.stacks import DEFAULT_STACK
from .fit import Model, Parameter, Prepared, Work, components, dependent_rows, fit, prepare
from .fitted import Fitted
from .params import DEFAULT_FITS, FITS, compute_parameters, expand_stack, stack_parameters
from .runs import Run, RunsFile, read_runs

EXTRA_RUNS = 2  # a group of k coupled parameters needs k + 2 runs: k + 1 left when one is held out


class Calibration(Fitted):
    """What `calibrate` fitted (fitted.py's `Fitted`) and the catalog overlay it writes."""

    def overlay_yaml(self) -> str:
        from .overlay import overlay_yaml

        return overlay_yaml(self)


def _stack_of(run: Run) -> str:
    return run.stack or DEFAULT_STACK


def select_stack(runs: RunsFile, stack: str | None) -> tuple[str, list[Run], int]:
    """The stack to fit and its runs; several stacks in the file need --stack."""
    stacks = sorted({_stack_of(r) for r in runs.runs})
    if stack is None:
        if len(stacks) > 1:
            raise InputError([Problem(runs.path, runs.header_line, 1, "workload.stack",
                                      f"the runs are of {len(stacks)} stacks ({', '.join(stacks)}): fit one at a "
                                      "time with --stack NAME")])
        stack = stacks[0] if stacks else DEFAULT_STACK
    kept = [r for r in runs.runs if _stack_of(r) == stack]
    if not kept:
        raise InputError([Problem(runs.path, runs.header_line, 1, "workload.stack",
                                  f"no run of stack '{stack}' (the runs are of: {', '.join(stacks)})")])
    return stack, kept, len(runs.runs) - len(kept)


def _check_enough(runs: RunsFile, kept: list[Run], params: list[Parameter],
                  groups: list[tuple[list[int], list[int]]]) -> None:
    problems = []
    if not groups:
        problems.append(Problem(runs.path, runs.header_line, 1, "", "no fitted parameter changes any run's "
                                "prediction: nothing to calibrate"))
    for pidx, rows in groups:
        need = len(pidx) + EXTRA_RUNS
        if len(rows) < need:
            names = ", ".join(params[k].label for k in pidx)
            lines = ", ".join(str(kept[i].line) for i in rows)
            problems.append(Problem(runs.path, kept[rows[0]].line, 1, "", (
                f"too few runs: {len(rows)} run(s) (line {lines}) for {len(pidx)} parameter(s) ({names}); at least "
                f"{need} are needed (parameters + {EXTRA_RUNS}, so each run can be left out): add {need - len(rows)} "
                "more run(s) of that GPU and precision")))
    if problems:
        raise InputError(problems)


def calibrate(path: str | Path, catalog: Catalog, stack: str | None = None, display: str | None = None,
              fits: tuple[str, ...] = DEFAULT_FITS, work: Work | None = None) -> Calibration:
    """Read, validate and fit the runs of `path` on `catalog`; refusals raise InputError (exit 2). `fits`
    names what is fitted: gemm (GEMM efficiency per precision), tp_overlap (ψ), attention."""
    files = [str(f) for f, _ in provenance(catalog).files]
    runs = read_runs(path, catalog, display, stack)
    stack, kept, skipped = select_stack(runs, stack)
    preps = prepare(RunsFile(runs.path, runs.measured_column, kept, runs.header_line), catalog)
    catalog, params, scope = _parameters(preps, catalog, stack, fits)
    model = Model(preps, catalog, params, runs.measured_column, work)
    groups = components(dependent_rows(model))
    _check_enough(runs, kept, params, groups)
    outcome = fit(model, groups)
    entries = {kind: catalog.by_id(kind) for kind in {p.kind for p in params}}
    return Calibration(runs.path, runs.measured_column, stack, kept, params, outcome, skipped, scope=scope,
                       catalog_entries=entries, catalog_files=files, duplicates=runs.duplicates, model=model)


def _parameters(preps: list[Prepared], catalog: Catalog, stack: str,
                fits: tuple[str, ...]) -> tuple[Catalog, list[Parameter], str]:
    """The stack profile's factors and ψ when the catalog lists the stack; else the GPUs' own efficiencies."""
    profile = catalog.by_id("stacks").get(stack)
    if profile is None:
        return catalog, compute_parameters(preps, catalog, fits), "gpus"
    platforms = catalog.by_id("platforms")
    gpu_ids = sorted({platforms[p.perf_class.platform].gpu for p in preps})
    catalog = expand_stack(catalog, profile, gpu_ids)
    return catalog, stack_parameters(preps, catalog, catalog.by_id("stacks")[stack], fits), "stacks"


__all__ = ["DEFAULT_FITS", "FITS", "Calibration", "Parameter", "calibrate"]
