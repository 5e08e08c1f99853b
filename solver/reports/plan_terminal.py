"""The plan on the terminal (rich): one row per period, then the totals and the comparisons."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

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
    return ", ".join(parts) or ("network and racks" if period["bought"] else "nothing")


def plan_table(report: dict) -> Table:
    tco = report["objective"] == "tco"
    t = Table(title=f"{safe(report['scenario'])}: {len(report['periods'])}-period plan ({report['architectures']}, "
                    f"objective {report['objective']}, discount {report['discount_rate']:.1%}/year), status {report['status']}",
              title_justify="left")
    cols = ["period", "changes", "design running the job", "GPUs run / owned", "step s", "bought", "capex"]
    cols += ["energy"] if tco else []
    cols += ["discounted"]
    for col in cols:
        t.add_column(col, justify="left" if col in ("period", "changes", "design running the job", "bought") else "right",
                     overflow="fold")
    before = report.get("owned_gpus", 0)
    for p in report["periods"]:
        changes = ", ".join(f"{k.split('.')[-1]} {v:,g}" for k, v in p["values"].items()) or "—"
        cluster = f" [cluster {p['cluster']}]" if p["cluster"] > 1 else ""
        row = [safe(p["label"]), safe(changes), safe(p["architecture"]) + cluster, f"{p['gpus']:,} / {p['gpus_owned']:,}",
               f"{p['step_time_s']:.2f} / {p['target_step_time_s']:.2f}", _bought(p, before), _usd(p["capex_usd"])]
        row += [_usd(p["energy_usd"])] if tco else []
        row += [_usd(p["discounted_usd"])]
        t.add_row(*row)
        before = p["gpus_owned"]
    return t


def print_plan(report: dict, console: Console) -> None:
    if report["status"] == "infeasible":
        console.print(f"[bold red]infeasible[/]: {safe(report.get('explanation'))}")
        return
    console.print(plan_table(report))
    tot = report["totals"]
    console.print(f"plan: discounted total [bold]{_usd(tot['discounted_usd'])}[/] (spend {_usd(tot['spend_usd'])} "
                  f"undiscounted)")
    comp = report.get("comparison", {})
    if comp.get("computed") is False:
        console.print("comparisons: not computed (--no-compare)")
    scratch = comp.get("from_scratch")
    if scratch:
        archs = safe("; ".join(f"{x['label']}: {x.get('architecture', x['status'])}" for x in scratch["periods"]))
        console.print(f"each period from scratch (the sweep's independent answers): {_usd(scratch['discounted_usd'])} "
                      f"discounted ({archs})")
    up = comp.get("up_front")
    if up:
        console.print(f"everything bought in the first period: {_usd(up.get('discounted_usd'))} discounted "
                      f"({safe(up.get('architecture', up['status']))})")
    for p in report["periods"]:
        for text in p.get("caveats") or []:
            console.print(f"  [yellow]⚠ {safe(p['label'])} caveat[/]: {safe(text)}")
        for c in p["clusters"]:
            if c["role"] != "running the job":
                console.print(f"  {safe(p['label'])}: cluster {c['cluster']} ({safe(c['architecture'])}, {c['gpus_held']:,} GPUs) "
                              "is available for other work")
        idle = [x for x in p["idle"] if x["category"] in ("compute", "switch", "nic")]
        if idle:
            console.print(f"  {safe(p['label'])}: idle " + ", ".join(f"{x['idle']:,} × {safe(x['part'])} ({_usd(x['value_usd'])})"
                                                              for x in idle))
