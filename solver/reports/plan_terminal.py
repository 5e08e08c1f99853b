"""The plan on the terminal (rich): one row per period, then the totals and the comparisons."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .tables import Column, make_table
from .text import safe


def _usd(value) -> str:
    return "—" if value is None else f"${value:,.0f}"


def _bought(period: dict, gpus_before: int) -> str:
    """What a period buys, in a few words: GPUs added, switches, and the money."""
    parts = []
    gpus = period["gpus_owned"] - gpus_before
    if gpus:
        parts.append(f"+{gpus:,} GPUs")
    switches = sum(b["quantity"] for b in period["bought"] if b["category"] == "switch")
    if switches:
        parts.append(f"+{switches:,} switches")
    lead = max((b["lead_time_weeks"] for b in period["bought"] if b.get("lead_time_weeks") is not None), default=None)
    text = ", ".join(parts) or ("network and racks" if period["bought"] else "nothing")
    return text + (f" (lead ≤ {lead:g} wk)" if lead is not None else "")


def _changes_column(report: dict, texts: list[str]) -> Column:
    """What changes per period: when every period changes the same one field, a number column headed by the
    field's name (it stacks into a narrow header), else the "name value" texts."""
    keys = {tuple(p["values"]) for p in report["periods"]}
    if len(keys) == 1 and len(next(iter(keys))) == 1:
        key = next(iter(keys))[0]
        return Column(key.split(".")[-1], [f"{p['values'][key]:,g}" for p in report["periods"]])
    return Column("changes", texts, number=False, min_width=12)


def plan_table(report: dict, width: int | None = None) -> Table:
    """One row per period; width-aware (reports/terminal.make_table): money and counts are never cut,
    text wraps, less important columns are left out at narrow widths and the caption names them."""
    tco = report["objective"] == "tco"
    title = (f"{safe(report['scenario'])}: {len(report['periods'])}-period plan ({report['architectures']}, "
             f"objective {report['objective']}, discount {report['discount_rate']:.1%}/year), status {report['status']}")
    rows: dict[str, list[str]] = {k: [] for k in ("period", "changes", "design", "gpus", "step", "bought", "capex",
                                                  "energy", "discounted")}
    before = report.get("owned_gpus", 0)
    for p in report["periods"]:
        cluster = f" [cluster {p['cluster']}]" if p["cluster"] > 1 else ""
        rows["period"].append(safe(p["label"]))
        rows["changes"].append(safe(", ".join(f"{k.split('.')[-1]} {v:,g}" for k, v in p["values"].items()) or "—"))
        rows["design"].append(safe(p["architecture"]) + cluster)
        rows["gpus"].append(f"{p['gpus']:,} / {p['gpus_owned']:,}")
        rows["step"].append(f"{p['step_time_s']:.2f} / {p['target_step_time_s']:.2f}")
        rows["bought"].append(_bought(p, before))
        rows["capex"].append(_usd(p["capex_usd"]))
        rows["energy"].append(_usd(p["energy_usd"]))
        rows["discounted"].append(_usd(p["discounted_usd"]))
        before = p["gpus_owned"]
    cols = [
        Column("period", rows["period"], number=False, min_width=6),
        # what changes, the step time against its target and what is bought are the plan's decisions: never left out
        # at 80 columns or more (issue 45); the text columns wrap instead
        _changes_column(report, rows["changes"]),
        Column("design running the job", rows["design"], number=False, min_width=16),
        Column("GPUs run / owned", rows["gpus"], drop=2),  # "bought" says the GPUs added
        Column("step s", rows["step"]),
        Column("bought", rows["bought"], number=False, min_width=12),
        Column("capex", rows["capex"]),
    ]
    cols += [Column("energy", rows["energy"], drop=3)] if tco else []
    cols += [Column("discounted", rows["discounted"], drop=1)]
    return make_table(title, cols, width)


def manual_text(manual: dict, plan_usd: float) -> str:
    """The best manual schedule against the plan: what it costs and what the plan saves."""
    if manual.get("discounted_usd") is None:
        return f"best manual schedule (the final cluster bought when needed): {safe(manual.get('status'))}"
    saved = manual["discounted_usd"] - plan_usd
    share = saved / manual["discounted_usd"] if manual["discounted_usd"] else 0.0
    verdict = (f"the plan saves {_usd(saved)} ({share:.1%})" if saved > 0.5 else "the plan is that schedule")
    return (f"best manual schedule (the final cluster's architecture, {safe(manual['architecture'])}, bought when "
            f"needed): {_usd(manual['discounted_usd'])} discounted; {verdict}")


def idle_lines(report: dict) -> list[str]:
    """Owned hardware left idle, one line per period that has any (compute, switches, NICs)."""
    out = []
    for p in report["periods"]:
        idle = [x for x in p.get("idle", []) if x["category"] in ("compute", "switch", "nic")]
        if idle:
            out.append(f"  {safe(p['label'])}: idle " + ", ".join(
                f"{x['idle']:,} × {safe(x['part'])}{' (owned)' if x.get('owned') else ''} ({_usd(x['value_usd'])})"
                for x in idle))
    return out


def _print_resale(tot: dict, console: Console) -> None:
    """plan.resale_fraction (issue 43b): each cluster is sold after the last period it runs."""
    if tot.get("resale_usd"):
        console.print(f"plan: net of resale — hardware resold for {_usd(tot['resale_usd'])} undiscounted, discounted "
                      f"spend {_usd(tot['discounted_gross_usd'])} gross")


def print_period_flags(report: dict, console: Console) -> None:
    """Each period's confidence statement, then its caveats: each distinct text once, after the periods that have it
    ("2029, 2030, 2031 confidence: …", "⚠ 2026, 2027 caveat: …")."""
    periods: dict[tuple[str, str], list[str]] = {}  # each distinct statement and caveat once, with its periods
    for p in report["periods"]:
        for kind, text in ([("confidence", p["confidence"])] if p.get("confidence") else []) + \
                [("caveat", t) for t in dict.fromkeys(p.get("caveats") or [])]:
            periods.setdefault((kind, text), []).append(str(p["label"]))
    for (kind, text), labels in sorted(periods.items(), key=lambda item: item[0][0] != "confidence"):  # stable
        line = f"{safe(', '.join(labels))} {kind}"
        console.print(f"  {line}: {safe(text)}" if kind == "confidence" else f"  [yellow]⚠ {line}[/]: {safe(text)}")


def print_plan(report: dict, console: Console) -> None:
    if report["status"] == "infeasible":
        console.print(f"[bold red]infeasible[/]: {safe(report.get('explanation'))}")
        return
    console.print(plan_table(report, console.width))
    tot = report["totals"]
    console.print(f"plan: discounted total [bold]{_usd(tot['discounted_usd'])}[/] (spend {_usd(tot['spend_usd'])} "
                  f"undiscounted)")
    _print_resale(tot, console)
    comp = report.get("comparison", {})
    if comp.get("computed") is False:
        console.print("comparisons: not computed (--no-compare)")
    manual = comp.get("manual")
    if manual:
        console.print(manual_text(manual, tot["discounted_usd"]))
    scratch = comp.get("from_scratch")
    if scratch:
        console.print(f"each period from scratch (the sweep's independent answers, not a purchase schedule): "
                      f"{_usd(scratch['discounted_usd'])} discounted")
    up = comp.get("up_front")
    if up:
        console.print(f"everything bought in the first period: {_usd(up.get('discounted_usd'))} discounted "
                      f"({safe(up.get('architecture', up['status']))})")
    print_period_flags(report, console)
    for p in report["periods"]:
        for c in p["clusters"]:
            if c["role"] != "running the job":
                console.print(f"  {safe(p['label'])}: cluster {c['cluster']} ({safe(c['architecture'])}, {c['gpus_held']:,} GPUs) "
                              "is available for other work")
    for line in idle_lines(report):
        console.print(line)

