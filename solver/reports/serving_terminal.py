"""The serving fleet on the terminal (SPEC §4.9): the ranked fleets, each fleet's pools, latencies with their
p10–p90 intervals, USD per million tokens; the frontier of cost against tokens/s per user; compare and sweep rows."""
from __future__ import annotations

from typing import Any

from .tables import Column, make_table, usd_text
from .text import safe


def _pools_text(d: Any) -> str:
    parts = []
    for p in d.pools:
        lay = p.option.layout
        ep = f" ep{lay.ep}" if lay.ep > 1 else ""
        m = p.option.machine
        parts.append(f"{p.role[:3]} {m.platform} tp{lay.tp}{'pp' + str(lay.pp) if lay.pp > 1 else ''}"
                     f"{ep} b{lay.concurrency} ×{p.replicas} ({m.nic}×{m.rails_per_node} {m.switch})")
    return safe(" + ".join(parts))


def fleet_columns(designs: list[Any]) -> list[Column]:
    """The ranked fleets. At 80 columns the money (capex, $ per million tokens) and the decisions (pools, GPUs) and
    the two latencies stay; the intervals (printed for #1 below the pools), TCO, tokens/s per GPU and kW go first."""
    s = [d.serving_dict() for d in designs]
    return [
        Column("#", [str(d.rank) for d in designs]),
        Column("pools (role platform layout concurrency × replicas)", [_pools_text(d) for d in designs], number=False,
               min_width=24),
        Column("GPUs", [f"{d.gpus:,}" for d in designs]),
        Column("capex", [usd_text(d.capex_usd) for d in designs]),
        Column("TCO", [usd_text(d.tco_usd) for d in designs], drop=3),
        Column("TTFT p90 s", [f"{x['ttft_p90_s']:.2f}" for x in s]),
        Column("TTFT p10–p90", [f"{x['ttft_p90_s_interval'][0]:.2f}–{x['ttft_p90_s_interval'][1]:.2f}" for x in s],
               drop=5),
        Column("tok/s/user", [f"{x['tokens_per_s_per_user']:.1f}" for x in s]),
        Column("tok/s/user p10–p90", [f"{x['tokens_per_s_per_user_interval'][0]:.1f}–"
                                      f"{x['tokens_per_s_per_user_interval'][1]:.1f}" for x in s], drop=4),
        Column("out tok/s/GPU", [f"{x['output_tokens_per_s_per_gpu']:,.0f}" for x in s], drop=2),
        Column("$/M out tok", [f"{x['usd_per_million_output_tokens']:.3f}" for x in s]),
        Column("kW", [f"{d.power_kw:,.1f}" for d in designs], drop=1),
    ]


def pool_columns(d: Any) -> list[Column]:
    """#1's pools. At 80 columns role, platform, layout and batch, replicas, GPUs, the latencies and capex stay."""
    rows = [p.to_dict() for p in d.pools]
    return [
        Column("role", [r["role"] for r in rows], number=False),
        Column("platform", [r["platform"] for r in rows], number=False),
        Column("tp/pp/ep·batch", [f"{r['tp']}/{r['pp']}/{r['ep']}·{r['concurrency']}" for r in rows]),
        Column("repl.", [str(r["replicas"]) for r in rows]),
        Column("GPUs", [str(r["gpus"]) for r in rows]),
        Column("nodes", [str(r["nodes"]) for r in rows], drop=4),
        Column("NIC × rails", [f"{r['nic']} ×{r['rails_per_node']}" for r in rows], number=False, drop=5),
        Column("switch/tiers", [f"{r['switch']}/{r['tiers']}" for r in rows], number=False, drop=6),
        Column("req/s cap.", [f"{r['requests_per_s_capacity']:.1f}" for r in rows], drop=2),
        Column("TTFT s", ["—" if r["ttft_p90_s"] is None else f"{r['ttft_p90_s']:.2f}" for r in rows]),
        Column("TPOT ms", ["—" if r["tpot_ms"] is None else f"{r['tpot_ms']:.1f}" for r in rows]),
        Column("HBM GB/GPU", [f"{r['memory_gb_per_gpu']:.0f}" for r in rows], drop=3),
        Column("capex", [usd_text(r["capex_usd"]) for r in rows]),
    ]


def print_fleets(result: Any, out: Any, wide: bool = False) -> None:
    """The ranked fleets, then the first fleet's pools and what it rests on."""
    if not result.designs:
        out.print(f"[bold red]infeasible[/]: {safe(result.explanation)}")
        return
    sc = result.designs[0]
    title = (f"{result.scenario}: {len(result.designs)} serving fleet(s), {result.objective}, peak "
             f"{sc.peak_rps:.2f} requests/s ({sc.input_tokens} in / {sc.output_tokens} out tokens)")
    out.print(make_table(safe(title), fleet_columns(result.designs), out.width, wide))
    best = result.designs[0]
    out.print(make_table(f"fleet #1 ({best.mode}): pools", pool_columns(best), out.width, wide))
    s = best.serving_dict()
    out.print(safe(f"fleet #1: TTFT p90 {s['ttft_p90_s']:.2f} s, TPOT {s['tpot_p90_ms']:.1f} ms "
                   f"({s['tokens_per_s_per_user']:.1f} tokens/s per user, p10–p90 "
                   f"{s['tokens_per_s_per_user_interval'][0]:.1f}–{s['tokens_per_s_per_user_interval'][1]:.1f}), "
                   f"capacity {s['requests_per_s_capacity']:.1f} requests/s, "
                   f"${s['usd_per_million_output_tokens']:.3f} per million output tokens "
                   f"(${s['usd_per_million_input_tokens']:.3f} per million input), "
                   f"KV transfer {s['kv_transfer_gbyte_s']:.1f} GB/s"))
    sched = s.get("schedule")
    if sched:
        quiet = min(sched["hours"], key=lambda x: x["requests_per_s"])
        out.print(safe(f"through the day: {sched['idle_gpu_hours_per_day']:,.0f} idle GPU-hours per day of "
                       f"{sched['job_gpus'] * 24:,} (at {quiet['hour']:02d}:00, {quiet['requests_per_s']:.1f} requests/s, "
                       f"{quiet['idle_gpus']} of {sched['job_gpus']} serving GPUs are idle: capacity to lend to training)"))
    night = s.get("night_training")
    if night and night["status"] == "optimal":
        out.print(safe(f"at night: {night['gpus_used']} of the {night['idle_gpus']} {night['platform']} GPUs idle "
                       f"{night['hours_per_day']} h a day train {night['scenario']} ({night['layout']}) at "
                       f"{night['step_time_s']:.2f} s per step: {night['training_tokens_per_day'] / 1e9:,.2f}B tokens a day"))
    elif night:
        out.print(safe(f"at night: no training ({night['explanation']})"))
    for flag in s["flags"]:
        out.print(f"[yellow]flag[/]: {safe(flag)}")
    for w in result.warnings:
        out.print(f"[yellow]warning[/]: {safe(w)}")
    for note in getattr(result, "notes", []):
        out.print(f"note: {safe(note)}")


def print_fleet_frontier(result: Any, out: Any, wide: bool = False) -> None:
    """Cost against tokens/s per user: each point the cheapest fleet decoding at least that fast."""
    pts = result.frontier or []
    cols = [Column("tokens/s/user", [f"{p['tokens_per_s_per_user']:.1f}" for p in pts]),
            Column("TPOT ms", [f"{p['tpot_p90_ms']:.1f}" for p in pts]),
            Column("capex", [usd_text(p["capex_usd"]) for p in pts]),
            Column("TCO", [usd_text(p["tco_usd"]) for p in pts], drop=1),
            Column("GPUs", [f"{p['gpus']:,}" for p in pts]),
            Column("fleet", [f"{p['mode']} {p['platform']}" for p in pts], number=False)]
    out.print(make_table(safe(f"{result.scenario}: cost against tokens/s per user"), cols, out.width, wide))


def compare_rows(results: list[Any], names: list[str], out: Any, wide: bool = False) -> None:
    """One row per scenario: its best fleet."""
    best = [r.designs[0] if r.designs else None for r in results]
    cols = [Column("scenario", names, number=False),
            Column("fleet", [_pools_text(d) if d else "infeasible" for d in best], number=False, min_width=28),
            Column("GPUs", [f"{d.gpus:,}" if d else "—" for d in best]),
            Column("capex", [usd_text(d.capex_usd) if d else "—" for d in best]),
            Column("tokens/s/user", [f"{1 / d.tpot_s:.1f}" if d else "—" for d in best]),
            Column("$/M out tok", [f"{d.serving_dict()['usd_per_million_output_tokens']:.3f}" if d else "—"
                                   for d in best])]
    out.print(make_table("serving fleets compared", cols, out.width, wide))
    for r, d in zip(results, best):  # each best fleet's flags: where the model has no measurement
        for flag in d.serving_dict()["flags"] if d else []:
            out.print(f"[yellow]flag[/] ({safe(r.scenario)}): {safe(flag)}")


def print_sweep(report: dict, out: Any, wide: bool = False) -> None:
    """One row per sweep point: the values, the best fleet, its GPUs, capex and USD per million output tokens."""
    rows = report["points"]
    names = list(rows[0]["values"]) if rows else []
    cols = [Column(n, [f"{r['values'][n]:,.4g}" if isinstance(r["values"][n], float) else str(r["values"][n])
                       for r in rows]) for n in names]
    cols += [Column("fleet", [f"{r['mode']} {r['platform']}" if r["mode"] else "infeasible" for r in rows],
                    number=False, min_width=24),
             Column("GPUs", [f"{r['gpus']:,}" if r["gpus"] else "—" for r in rows]),
             Column("capex", [usd_text(r["capex_usd"]) if r["capex_usd"] else "—" for r in rows]),
             Column("$/M out tok", [f"{r['usd_per_million_output_tokens']:.3f}" if r["capex_usd"] else "—"
                                    for r in rows])]
    out.print(make_table(safe(f"{report['scenario']}: sweep"), cols, out.width, wide))
    points: dict[str, list[int]] = {}
    for r in rows:  # where the model has no measurement: each flag once, with the points it holds at
        for flag in r.get("flags", []):
            points.setdefault(flag, []).append(r["index"])
    for flag, at in points.items():
        out.print(f"[yellow]flag[/] (points {', '.join(map(str, at))}): {safe(flag)}")
    if report["architecture_changes_at"]:
        out.print(safe(f"the best fleet changes at points {report['architecture_changes_at']}"))
