"""The catalog overlay `fabricplan calibrate` writes: a provenance header (runs file, runs, date, the
fitted values, before/after errors) as YAML comments, then partial entries that `--catalog` layers over
the shipped catalog by id (SPEC §8.1: an entry may give only the fields it overrides)."""
from __future__ import annotations

from pathlib import Path

import yaml

from ..reports.text import plain
from .fitted import Fitted
from .numbers import percent

SOURCE_FIELD = {"gpus": "compute_efficiency_source"}  # the field naming where a kind's fitted values come from
DIGITS = 4


def _pct(x: float) -> str:
    return percent(x).replace("%", " %")


def comment_text(text: str) -> str:
    """One line of a YAML comment: every control character (a line end included) shown as its escape, so no
    text from the runs file or a path can end the comment and start a live YAML line (issue 44)."""
    return plain(text).replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def _lines(numbers: list[int]) -> str:
    """2, 3, 4, 7 → '2-4, 7'."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and out[-1].split("-")[-1] == str(n - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def header(cal: Fitted) -> list[str]:
    """The provenance comment block."""
    out = [
        "fabricplan calibrate overlay (SPEC §4.8): layer it with `fabricplan solve SCENARIO --catalog THIS_FILE`",
        f"runs: {cal.path}, {len(cal.runs)} run(s) of stack '{cal.stack}' (lines {_lines([r.line for r in cal.runs])})"
        + (f"; {cal.skipped} run(s) of other stacks skipped" if cal.skipped else ""),
        f"measured column: {cal.column}; fitted on {cal.date} (UTC)",
        "fitted over the catalogs: " + (", ".join(Path(f).name for f in cal.catalog_files) or "built in code")
        + " (layer this file after the same ones)",
        "fitted (least squares of ln(predicted / measured), bounded):",
    ]
    for (pidx, rows) in cal.outcome.groups:
        for k in pidx:
            p = cal.params[k]
            out.append(f"  {p.label}: {p.default:.{DIGITS}f} -> {cal.outcome.values[k]:.{DIGITS}f} "
                       f"(bounds {p.low:.4g}-{p.high:.4g}; {len(rows)} runs, lines {_lines([cal.runs[i].line for i in rows])})")
    out.append(f"median |error|: defaults {percent(cal.median('default'), sign=False)}, fitted "
               f"{percent(cal.median('fitted'), sign=False)}, {cal.loo_label} {percent(cal.median('loo'), sign=False)}; "
               f"worst {percent(cal.worst('default'), sign=False)} -> {percent(cal.worst('loo'), sign=False)} "
               f"({cal.loo_label})")
    if cal.scope == "gpus":
        out.append("these are the GPUs' own compute parameters: they apply to every stack run on those GPUs")
    out.append("line  measured      default  fitted   leave-one-out")
    for r, d, f, lo in zip(cal.runs, cal.errors("default"), cal.errors("fitted"), cal.errors("loo"), strict=True):
        out.append(f"{r.line:>4}  {r.measured:<12.6g}  {_pct(d):>7}  {_pct(f):>7}  {_pct(lo):>7}"
                   + (f"  {r.source}" if r.source else ""))
    return ["# " + comment_text(line) if line else "#" for line in out]


def entries(cal: Fitted, catalog_entries: dict) -> dict[str, list[dict]]:
    """{kind: [partial entry]}: each fitted entry's id, the whole top-level fields it changes (nested
    blocks are replaced whole when layered, so they are written whole) and where the values come from."""
    out: dict[str, list[dict]] = {}
    touched: dict[tuple[str, str], dict] = {}
    for k in sorted({k for pidx, _ in cal.outcome.groups for k in pidx}):
        p = cal.params[k]
        key = (p.kind, p.ident)
        if key not in touched:
            touched[key] = {"id": p.ident}
            out.setdefault(p.kind, []).append(touched[key])
        full = catalog_entries[p.kind][p.ident].model_dump(mode="json")
        entry = touched[key]
        top = p.field[0]
        entry.setdefault(top, full[top])
        node, holder = entry, None
        for part in p.field[:-1]:
            node = node[part]
            if isinstance(node, dict) and "source" in node:
                holder = node  # the fitted sub-entry (a stack's GPU entry)
        node[p.field[-1]] = round(cal.outcome.values[k], DIGITS)
        if holder is not None:
            holder["source"] = _provenance(cal)
    for kind, items in out.items():
        for item in items:
            item[SOURCE_FIELD.get(kind, "source")] = _provenance(cal)
    return out


def _provenance(cal: Fitted) -> str:
    return (f"fabricplan calibrate on {Path(cal.path).name} ({len(cal.runs)} runs of stack '{cal.stack}', {cal.date}); "
            f"{cal.loo_label} median |error| {percent(cal.median('loo'), sign=False)}")


def overlay_yaml(cal: Fitted, catalog_entries: dict | None = None) -> str:
    body: dict[str, object] = {"name": f"calibrated-{Path(cal.path).stem}"[:80],
            "description": f"fitted by fabricplan calibrate on {Path(cal.path).name}, {cal.date}"}
    body.update(entries(cal, catalog_entries or cal.catalog_entries))
    text = yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(header(cal)) + "\n" + text
