"""`fabricplan calibrate RUNS -o OVERLAY.yaml [--stack NAME] [--catalog …]` (SPEC §8.1): the CLI's part."""
from __future__ import annotations

from pathlib import Path

from ..errors import UsageError


def run_calibrate(args, out, catalog_paths: list) -> int:
    from ..files import atomic_path, check_writable
    from ..inputs.catalog import load_catalog
    from ..reports.text import safe
    from . import FITS, calibrate
    from .table import print_report

    target = Path(args.output)
    if target.suffix.lower() not in (".yaml", ".yml"):
        raise UsageError(f"-o {args.output}: the overlay is a catalog file; give a .yaml or .yml name")
    if not catalog_paths:
        raise UsageError("--no-default-catalog needs a --catalog file")
    fits = tuple(f.strip() for f in args.fit.split(",") if f.strip())
    unknown = [f for f in fits if f not in FITS]
    if unknown or not fits:
        raise UsageError(f"--fit {args.fit}: name one or more of {', '.join(FITS)}, separated by commas")
    check_writable(target)
    catalog = load_catalog(catalog_paths)
    cal = calibrate(args.runs, catalog, args.stack, fits=fits)
    print_report(cal, out)
    cal.check()  # a fit no better than the defaults: exit 2, nothing written
    text = cal.overlay_yaml()
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    out.print(safe(f"wrote {target}: layer it with --catalog {target}"))
    return 0
