"""Terminal reports with rich: the ranked designs, one design's breakdown and BOM, the sweeps. The tables
(tables.py), the `compare` tables (compare_terminal.py) and the catalog tables (catalog_terminal.py) live in their
own modules (import their names from there)."""
from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ..figures import figure
from ..perf.layout import expert_text
from ..perf.step import MARGIN_CAP
from ..sweep.summary import TCO_PER_MTOK, point_label
from .grouping import grouped, grouped_clauses, grouped_each
from .tables import Column, design_layout, fit_columns, gb_text, make_table, step_text, usd_text
from .text import safe

if TYPE_CHECKING:  # annotations only: `catalog` and `validate` load no design space (numpy)
    from ..results import Design, SolveResult


def differs_from_first(design: Design, first: Design) -> str:
    """How a design differs from the best one: its parts (platform, NICs and rails, switch), fabric family, tier
    count, oversubscription (the leaves', the tier above the pods'), layout and GPUs."""
    if design is first:
        return "—"
    a, b = design.architecture, first.architecture
    out = []
    if a.platform != b.platform:
        out.append(f"platform {a.platform}")
    if a.nic != b.nic or a.rails_per_node != b.rails_per_node:
        out.append(f"{a.rails_per_node}×{a.nic}" if a.nic != b.nic
                       else f"{a.rails_per_node} rail" + ("s" if a.rails_per_node != 1 else ""))
    if a.switch != b.switch:
        out.append(f"switch {a.switch}")
    if a.fabric != b.fabric:
        out.append(a.fabric)
    if design.tiers != first.tiers:
        out.append(f"{design.tiers} tier" + ("s" if design.tiers != 1 else ""))
    if a.oversubscription != b.oversubscription:
        out.append(f"{a.oversubscription:g}:1")
    if a.above_pod_oversubscription != b.above_pod_oversubscription:
        out.append(f"{a.above_pod_oversubscription:g}:1 above the pods")
    if design_layout(design) != design_layout(first):
        out.append(f"layout {design_layout(design)}")
    if design.cost.gpus != first.cost.gpus:
        out.append(f"{design.cost.gpus - first.cost.gpus:+,} GPUs")
    return "; ".join(out) or "same design, other layout"


def solve_columns(result: SolveResult) -> list[Column]:
    ds = result.designs
    js = [d.to_dict() for d in ds]  # the figures as the JSON has them (`figures.FIGURES`)
    first = ds[0] if ds else None
    money = "tco_usd" if ds and ds[0].objective in ("tco", "rent_or_buy") else "capex_usd"
    other = "capex_usd" if money == "tco_usd" else "tco_usd"

    def fig(key: str, drop: int | None = None) -> Column:
        f = figure(key)
        return Column(f.header, [f.text(j) for j in js], number=f.unit != "text", drop=f.drop if drop is None else drop)

    cols = [
        Column("#", [str(d.rank) + (" [yellow]⚠[/]" if d.uncalibrated or d.caveats else "") for d in ds]),
        Column("architecture", [safe(d.label) for d in ds], number=False, min_width=ARCHITECTURE_WIDTH),
        fig("gpus"),
        Column("step s", [step_text(d) for d in ds]),
    ]
    if ds and ds[0].train_days is not None:
        cols.append(fig("train_days"))
    cols += [
        fig(money, drop=0),
        Column("differs from #1", [safe(differs_from_first(d, first)) for d in ds], number=False, min_width=14, drop=1)
        if first is not None else Column("differs from #1", [], number=False),
        # never wrapped (a layout cut in two reads as two), its header stacked after the dots when narrow
        Column("layout tp·cp·pp·vp·dp·mbs", [design_layout(d) for d in ds], drop=3),
        Column("margin cmp/bw", [margin_text(d) for d in ds], drop=5),
        fig("nodes"),
        fig("mfu"),
        *([fig("goodput")] if ds and ds[0].reliability else []),
        fig("facility_power_kw"),
        fig(other, drop=6),
        fig("racks"),
        fig("fabric"),
    ]
    return cols


ARCHITECTURE_WIDTH = 14  # the architecture column wraps down to this …
ROOMY_ARCHITECTURE_WIDTH = 26  # … but keeps this room (two lines) when only the least important columns pay for it


def solve_table(result: SolveResult, width: int | None = None, wide: bool = False) -> Table:
    """The ranked designs. The architecture column gets room for two lines (instead of three or four) when that
    leaves out only columns of drop rank ≥ 3 that the narrower column would have kept (nodes, goodput: both
    printed below or derived), never the money, step, days or differences."""
    title = f"{safe(result.scenario)}: {len(result.designs)} design(s), status {result.status}"
    cols = solve_columns(result)
    if not wide and width is not None:
        roomy = [replace(c, min_width=ROOMY_ARCHITECTURE_WIDTH) if c.header == "architecture" else c for c in cols]
        lost = ({c.header for c in fit_columns(cols, width)} - {c.header for c in fit_columns(roomy, width)})
        if all(c.drop >= 3 for c in cols if c.header in lost):
            cols = roomy
    return make_table(title, cols, width, wide)


def margins_sentence(design: Design) -> str:
    """The margins in words; no slack or slowdown without a finite target, none when the target is missed."""
    m = design.margins
    if not math.isfinite(design.target_step_time_s):
        return "margins: none to report (no step-time target)"
    if not design.meets_target and m["compute_slowdown"] == 0:
        return f"margins: none: the step time misses the target by {-m['slack_fraction']:.1%}"
    slowdown = (f"more than {MARGIN_CAP:.0%}" if m["compute_slowdown"] >= MARGIN_CAP * (1 - 1e-6)
                else f"{m['compute_slowdown']:.1%}")
    derate = "any (no scale-out traffic)" if m["bandwidth_derate"] >= 1 else f"{m['bandwidth_derate']:.1%}"
    return (f"margins: slack {m['slack_fraction']:.1%} of the target; survives a compute slowdown of {slowdown} and a "
            f"scale-out bandwidth derate of {derate}")


def margin_text(d: Design) -> str:
    """The largest compute slowdown / scale-out bandwidth derate the design survives ("any": no scale-out)."""
    m = d.margins
    if not m:
        return ""
    if not math.isfinite(d.target_step_time_s):
        return "—"
    bw = "any" if m["bandwidth_derate"] >= 1 else f"{m['bandwidth_derate']:.0%}"
    cmp = f">{MARGIN_CAP:+.0%}" if m["compute_slowdown"] >= MARGIN_CAP * (1 - 1e-6) else f"{m['compute_slowdown']:+.0%}"
    return f"{cmp} / {bw}"


def interval_text(d: Design) -> str:
    """The design's confidence statement (solver/confidence.py: the same words as the JSON, workbook, sweep and plan):
    "step time 2.45 s, p10–p90 2.21–2.82 s (-10%/+17%, 22 runs, 4 sources (dense·megatron·…))"."""
    from ..confidence import confidence  # lazy: `catalog` and `validate` load no design space

    quantile = (f"; p{d.quantile * 100:.0f} {d.perf.step_time_s * d.quantile_factor:.2f} s meets the target"
                if d.quantile is not None else "")
    return confidence(d).statement() + quantile


def print_intervals(designs: list[Design], console: Console) -> None:
    """Each design's confidence statement (its step-time interval from the calibration residuals of its regime),
    once per distinct statement with the ranks that share it."""
    for ranks, text in grouped(designs, interval_text):
        console.print(f"  {ranks} {safe(text)}")


def print_uncalibrated(designs: list[Design], console: Console) -> None:
    """Each regime no calibration row covers (perf.coverage), once per distinct flag with the ranks it holds for,
    then the caveats."""
    for ranks, text in grouped_each(designs, lambda d: d.uncalibrated):
        console.print(f"  [yellow]⚠ {ranks} uncalibrated[/]: {safe(text)}")
    print_caveats(designs, console)


def network_load_text(d: Design) -> str:
    """"network load 0.10 (most loaded measured dense run 0.15: Fire-Flyer 2 …)" (perf/network_load.py)."""
    n = d.network_load
    if not n:
        return ""
    beyond = ": beyond the measured range" if n["beyond_measured"] else ""
    return (f"network load {n['value']:.2f} (scale-out busy ÷ compute; most loaded measured {n['kind']} run "
            f"{n['measured_max']:.2f}, {n['measured_run']}){beyond}")


def print_caveats(designs: list[Design], console: Console) -> None:
    """What a buyer must know before ordering (SPEC §5.2): the caveats (each distinct one once, with its ranks),
    #1's network load (unless beyond the measured range: its caveat then says it, with the same numbers) and the
    reference designs (one line: "reference design: #1, #5 …; #2 …")."""
    for ranks, text in grouped_each(designs, lambda d: d.caveats):
        console.print(f"  [yellow]⚠ {ranks} caveat[/]: {safe(text)}")
    for d in designs:
        if d.rank <= 1 and d.network_load and not d.network_load["beyond_measured"]:
            console.print(f"  #{d.rank} {safe(network_load_text(d))}")
    references = grouped(designs, lambda d: d.reference_design)
    if len(references) == 1:
        console.print(f"  {references[0][0]} reference design: {safe(references[0][1])}")
    elif references:
        console.print("  reference design: " + "; ".join(f"{ranks} {safe(text)}" for ranks, text in references))


def print_assumptions(result: SolveResult, console: Console) -> None:
    """What the loader assumed for a model named by preset or parameter count (workload.assumptions)."""
    for text in result.assumptions:
        console.print(f"[cyan]assumption[/]: {safe(text)}")


def print_solve(result: SolveResult, console: Console, wide: bool = False) -> None:
    print_assumptions(result, console)
    if result.status == "infeasible":
        console.print(f"[bold red]infeasible[/]: {safe(result.explanation)}")
        return
    if result.answer:
        console.print(f"[bold]answer[/]: {safe(result.answer)}")
    if result.designs and result.designs[0].objective == "fastest":
        console.print("objective: fastest design within the caps (ranked by step time, then cost)")
    console.print(f"software stack: {safe(result.stack)} (workload.stack; step times and intervals assume it)")
    console.print(solve_table(result, console.width, wide))
    print_intervals(result.designs, console)
    for d in result.designs:
        tight = [b["text"] for b in d.binding if b["binding"]]
        if tight:
            console.print(f"  #{d.rank} binding: " + "; ".join(safe(x) for x in tight))
        if d.cost.inventory:
            console.print(f"  #{d.rank} owned: {safe(inventory_text(d))}")
    for ranks, text in grouped(result.designs, lambda d: goodput_text(d) if d.reliability is not None else ""):
        console.print(f"  {ranks} {text}")
    rests = grouped_clauses(result.designs, lambda d: d.reliability.assumptions if d.reliability is not None else "")
    if rests:
        console.print(f"  goodput rests on: {safe(rests)}")
    print_uncalibrated(result.designs, console)
    from .rent_terminal import print_rent  # lazy: rent_terminal builds on this module's tables

    print_rent(result.designs, console, wide)
    gap = f", gap {result.gap:.2%}" if result.gap else ""
    t = result.timings_s
    console.print(f"solved in {t.get('total_s', result.solve_time_s):.2f} s (design space {t.get('design_space_s', 0):.2f} s, "
                  f"model build {t.get('build_s', 0):.2f} s, HiGHS {t.get('solve_s', 0):.2f} s{gap}); "
                  f"{result.stats.get('shapes_kept', 0):,} layouts kept of {result.stats.get('combinations', 0):,} combinations")
    for note in result.notes:
        console.print(f"note: {safe(note)}")
    for w in result.warnings + ([result.price_warning] if result.price_warning else []):
        console.print(f"[yellow]warning[/]: {safe(w)}")


def fabric_text(c) -> str:
    """A costed design's fabric in words, each switch role and link name its family's (`FabricSize.vocabulary`):
    "fabric: fat-tree, 2 tier(s), 8 leaf + 4 spine + 0 core <switch> (64 ports in use); links 256 / 256 / 0"."""
    f = c.fabric
    words = f.vocabulary
    planes = f" in {f.planes} planes" if f.planes > 1 else ""
    switches = " + ".join(f"{f.switches.get(role, 0)} {role}" for role in words.switch_roles)
    links = " / ".join(f"{f.links.get(name, 0):,}" for name in words.link_names)
    return f"fabric: {f.family}, {f.tiers} tier(s){planes}, {switches} {safe(c.switch)} ({f.k} ports in use); links {links}"


def print_design(design: Design, console: Console, wide: bool = False) -> None:
    p, c, lay = design.perf, design.cost, design.layout
    verdict = "[green]meets the target[/]" if design.meets_target else "[red]misses the target[/]"
    console.print(f"[bold]{safe(design.label)}[/]: {c.gpus:,} GPUs ({p.gpus:,} used), {c.nodes:,} nodes, "
                  f"tp={lay.tp} cp={lay.cp} pp={lay.pp} vp={lay.vp} dp={lay.dp} mbs={lay.microbatch_size}"
                  f"{expert_text(lay)}, "
                  f"{p.microbatches} microbatches")
    console.print(f"step time {p.step_time_s:.3f} s against a target of {design.target_step_time_s:.3f} s: {verdict}; "
                  f"MFU {p.mfu:.1%}, {p.hardware_tflops_per_gpu:,.0f} hardware TFLOP/s per GPU")
    console.print(f"software stack {safe(design.stack)}; {safe(interval_text(design))}")
    t = Table(title="step time breakdown (s)", title_justify="left")
    for col in ("term", "time s", "window s", "exposed s", "NVLink bytes/GPU", "scale-out bytes/GPU"):
        t.add_column(col, justify="right" if col != "term" else "left")
    t.add_row("compute", f"{p.compute_s:.3f}", "", f"{p.compute_s:.3f}", "", "")
    t.add_row("bubble", f"{p.bubble_s:.3f}", "", f"{p.bubble_s:.3f}", "", "")
    for k, tr in p.traffic.items():
        t.add_row(k, f"{tr.time_s:.3f}", f"{tr.window_s:.3f}", f"{tr.exposed_s:.3f}", gb_text(tr.nvlink_bytes),
                  gb_text(tr.scaleout_bytes))
    if p.capacity_s > 0:
        t.add_row("link capacity", f"{max(p.scaleout_busy_s, p.nvlink_busy_s):.3f}", "", f"{p.capacity_s:.3f}", "", "")
    t.add_row("[bold]step[/]", f"[bold]{p.step_time_s:.3f}[/]", "", "", gb_text(p.nvlink_bytes), gb_text(p.scaleout_bytes))
    console.print(t)
    if design.margins:
        console.print(margins_sentence(design))
    print_uncalibrated([design], console)
    fit = "fits" if p.fits_memory else "[red]does NOT fit[/]"
    console.print(f"memory per GPU {p.memory_per_gpu_gb:,.1f} GB (states {p.memory_states_gb:,.1f} + activations "
                  f"{p.memory_activations_gb:,.1f}) of {p.hbm_usable_gb:,.1f} GB usable: {fit}; dominant: "
                  f"{safe(', '.join(p.dominant_terms))}")
    console.print(f"{fabric_text(c)}; racks {c.racks}; IT {c.it_power_kw:,.0f} kW, facility {c.facility_power_kw:,.0f} kW")
    if design.reliability is not None:
        console.print(goodput_text(design))
        console.print(f"  goodput rests on: {safe(design.reliability.assumptions)}")
    console.print(bom_table(design, console.width, wide))
    console.print(f"capex {usd_text(c.capex_usd)}; TCO over {c.tco_years:g} years {usd_text(c.tco_usd)}")
    if design.rent is not None:
        from .rent_terminal import print_rent  # lazy: rent_terminal builds on this module's tables

        print_rent([design], console, wide)
    if c.inventory:
        console.print(f"owned: {safe(inventory_text(design))}")
    for b in design.binding:
        flag = "[bold red]violated[/] " if b.get("violated") else "[bold]binding[/] " if b["binding"] else ""
        console.print(f"  {flag}{safe(b['text'])}")


def goodput_text(design: Design) -> str:
    """One line of failures, checkpoints and spares (SPEC §6.2)."""
    r = design.reliability
    assert r is not None
    mtbf = f"{r.job_mtbf_h:,.1f} h" if math.isfinite(r.job_mtbf_h) else "∞"
    every = f"{r.checkpoint_interval_min:,.0f} min" if math.isfinite(r.checkpoint_interval_min) else "never"
    unit = design.cost.platform
    share = r.spare_gpus_in_domains / design.cost.gpus if design.cost.gpus else 0.0
    inside = (f" (and {r.spare_gpus_in_domains:,} GPUs, {share:.0%} of those bought, that the layout leaves idle in "
              "partly used NVLink domains: they stand in for failed nodes of their domain)" if r.spare_gpus_in_domains else "")
    override = " (target.goodput given)" if abs(design.goodput - r.goodput) > 1e-12 else ""
    used = ", in the target" if r.in_target else ""
    return (f"goodput {design.goodput:.1%}{override}{used}: {r.interruptions_per_day:,.2f} interruptions/day, "
            f"job MTBF {mtbf}, checkpoint every {every}, {r.spare_units:,} spare {safe(unit)} unit(s){inside}")


def inventory_text(design: Design) -> str:
    """Owned parts reused and idle: '64 dgx-h100 used; 8 qm9700 used, 2 idle ($72,000)'."""
    parts = []
    for u in design.cost.inventory:
        idle = f", {u.idle:,} idle ({usd_text(u.idle_value_usd)})" if u.idle else ""
        parts.append(f"{u.used:,} {u.part} used{idle}")
    return "; ".join(parts)


def bom_table(design: Design, width: int | None = None, wide: bool = False) -> Table:
    lines = design.cost.bom
    cols = [
        Column("category", [safe(x.category) for x in lines] + [""], number=False, min_width=8, drop=2),
        Column("part", [safe(x.part) for x in lines] + [""], number=False, min_width=10),
        Column("description", [safe(x.description) for x in lines] + ["[bold]total[/]"], number=False, min_width=12, drop=1),
        Column("qty", [f"{x.quantity:,}" for x in lines] + [""]),
        # the unit price goes with the category before the extended amount and its total could be left out
        # (site lines' ids such as storage-fabric-hgx left no room for both at 80 columns)
        Column("unit $", [f"{x.unit_price_usd:,.2f}" for x in lines] + [""], drop=2),
        Column("extended $", [f"{x.extended_usd:,.2f}" for x in lines] + [f"[bold]{design.cost.capex_usd:,.2f}[/]"]),
        Column("source", [safe(x.price_source[:40]) + (" (est.)" if x.price_is_estimate else "") for x in lines] + [""],
               number=False, min_width=12, drop=3),
        Column("date", [safe(x.price_date) for x in lines] + [""], drop=4),
    ]
    if any(x.lead_time_weeks is not None for x in lines):  # quoted lead times (catalog lead_time_weeks)
        cols.append(Column("lead wk", ["" if x.lead_time_weeks is None else f"{x.lead_time_weeks:g}" for x in lines]
                           + [f"{max(x.lead_time_weeks or 0 for x in lines):g}"], drop=3))
    return make_table("bill of materials", cols, width, wide)


# --------------------------------------------------------------------------------- sweeps


def _usd_or_dash(value) -> str:
    return "—" if value is None else f"${value:,.0f}"


def _sweep_step(r: dict) -> str:
    target = r.get("target_step_time_s")
    if target is None or target == float("inf"):  # objective: fastest without a target
        return f"{r['step_time_s']:.2f}"
    return f"{r['step_time_s']:.2f} / {target:.2f}"


SWEEP_FIGURES = (("capex_usd", 0), ("nodes", 4), ("mfu", 3), ("tco_usd", 2), ("capex_usd_per_pflop_s", 5),
                 ("tco_usd_per_million_tokens", 1))  # (figure, drop rank) after GPUs and step s


def sweep_table(report: dict, width: int | None = None, wide: bool = False) -> Table:
    title = f"{safe(report['scenario'])}: sweep of {len(report['points'])} point(s)"
    points = report["points"]
    names = [a["name"] for a in report["axes"]]
    solved = [r if r.get("architecture") else None for r in points]

    def col(header: str, cell, number: bool = True, drop: int = 0, min_width: int = 10) -> Column:
        return Column(header, [cell(r) if r is not None else "" for r in solved], number, drop, min_width)

    cols = [Column(safe(n), [safe(r["labels"].get(n, "")) for r in points]) for n in names]
    cols.append(Column("status", [safe(r["status"]) if r.get("architecture") else f"[red]{safe(r['status'])}[/]" for r in points],
                       number=False, min_width=8))
    cols.append(Column("architecture", [safe(r.get("architecture") or (r.get("reason") or "")[:80]) for r in points],
                       number=False, min_width=14))
    # the figures of each point's row (`figures.FIGURES`; the row holds them under their keys), with this table's
    # order of dropping them when it is too narrow
    cols.append(col(figure("gpus").header, lambda r: figure("gpus").format(r["gpus"])))
    cols.append(col(figure("step_time_s").header, _sweep_step))
    for key, drop in SWEEP_FIGURES:
        f = TCO_PER_MTOK if key == TCO_PER_MTOK.key else figure(key)
        cols.append(col(f.header, lambda r, f=f: f.format(r[f.key]), drop=drop))
    return make_table(title, cols, width, wide)


def points_text(rows: list[dict]) -> str:
    """The sweep points' labels: "workload.global_batch_size=3,072, 4,608" when they vary on one axis only, else
    each point's label, "; "-separated."""
    names = {tuple(r["labels"]) for r in rows}
    if len(names) == 1 and len(next(iter(names))) == 1:
        (name,) = next(iter(names))
        return f"{name}=" + ", ".join(str(r["labels"][name]) for r in rows)
    return "; ".join(point_label(r) for r in rows)


def print_report(report: dict, console, wide: bool = False) -> None:
    console.print(sweep_table(report, console.width, wide))
    points: dict[str, list[dict]] = {}  # each distinct caveat once, with the points that carry it
    for r in report["points"]:
        for text in dict.fromkeys(r.get("caveats") or []):
            points.setdefault(text, []).append(r)
    for text, rows in points.items():
        console.print(f"  [yellow]⚠ {safe(points_text(rows))} caveat[/]: {safe(text)}")
    for s in report["switch_points"]:
        console.print(f"switch point at {safe(', '.join(f'{k}={v}' for k, v in s['labels'].items()))}: "
                      f"{safe(s['from'])} → [bold]{safe(s['to'])}[/]")
    if not report["switch_points"]:
        console.print("no switch point: the best architecture is the same at every solved point")
    if report.get("independent"):
        console.print(f"note: {report['independent']}")
    for inc in report["increments"]:
        console.print(f"to {safe(', '.join(f'{k}={v}' for k, v in inc['labels'].items()))}: add {inc['added_gpus']:,} GPUs, "
                      f"{inc['added_nodes']:,} nodes, {inc['added_switches']:,} switches, {inc['added_racks']:,} racks "
                      f"({_usd_or_dash(inc['capex_delta_usd'])})")
    for r in report["points"]:
        for w in r.get("warnings", []):
            console.print(f"[yellow]warning[/], point {r['index']} ({safe(point_label(r))}): {safe(w)}")
        if r["status"] in ("infeasible", "error"):
            console.print(f"[yellow]point {r['index']}[/] ({safe(point_label(r))}) {safe(r['status'])}: {safe(r.get('reason'))}")
