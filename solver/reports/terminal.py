"""Terminal reports with rich: the ranked designs, one design's breakdown and BOM, the catalog."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..inputs.schema import Catalog
from ..perf.layout import expert_text
from ..results import Design, SolveResult
from ..sweep.summary import point_label


def _usd(value: float) -> str:
    return f"${value:,.0f}"


def _price(item, text: str | None = None) -> str:
    """A catalog price, flagged when the catalog marks it as an estimate."""
    return (text or _usd(item.unit_price_usd)) + (" est." if item.price_is_estimate else "")


def _gb(value: float) -> str:
    return f"{value / 1e9:,.1f} GB"


def solve_table(result: SolveResult) -> Table:
    t = Table(title=f"{result.scenario}: {len(result.designs)} design(s), status {result.status}", title_justify="left")
    for col in ("#", "architecture", "GPUs", "nodes", "layout tp·cp·pp·vp·dp·mbs", "step s", "margin cmp/bw", "MFU",
                "facility kW", "racks", "capex", "TCO"):
        t.add_column(col, justify="left" if col in ("architecture", "layout tp·cp·pp·vp·dp·mbs") else "right")
    for d in result.designs:
        lay = d.layout
        flag = " [yellow]⚠[/]" if d.uncalibrated else ""
        t.add_row(str(d.rank) + flag, d.label, f"{d.cost.gpus:,}", f"{d.cost.nodes:,}",
                  f"{lay.tp}·{lay.cp}·{lay.pp}·{lay.vp}·{lay.dp}·{lay.microbatch_size}" + expert_text(lay),
                  f"{d.perf.step_time_s:.2f} / {d.target_step_time_s:.2f}", margin_text(d), f"{d.perf.mfu:.1%}",
                  f"{d.cost.facility_power_kw:,.0f}", f"{d.cost.racks:,}", _usd(d.cost.capex_usd), _usd(d.cost.tco_usd))
    return t


def margin_text(d: Design) -> str:
    """The largest compute slowdown / scale-out bandwidth derate the design survives ("any": no scale-out)."""
    m = d.margins
    if not m:
        return ""
    bw = "any" if m["bandwidth_derate"] >= 1 else f"{m['bandwidth_derate']:.0%}"
    return f"{m['compute_slowdown']:+.0%} / {bw}"


def print_uncalibrated(designs: list[Design], console: Console) -> None:
    """Each design whose result rests on a regime no calibration row covers (perf.coverage)."""
    for d in designs:
        for text in d.uncalibrated:
            console.print(f"  [yellow]⚠ #{d.rank} uncalibrated[/]: {text}")


def print_solve(result: SolveResult, console: Console) -> None:
    if result.status == "infeasible":
        console.print(f"[bold red]infeasible[/]: {result.explanation}")
        return
    console.print(solve_table(result))
    for d in result.designs:
        tight = [b["text"] for b in d.binding if b["binding"]]
        if tight:
            console.print(f"  #{d.rank} binding: " + "; ".join(tight))
    print_uncalibrated(result.designs, console)
    gap = f", gap {result.gap:.2%}" if result.gap else ""
    t = result.timings_s
    console.print(f"solved in {t.get('total_s', result.solve_time_s):.2f} s (design space {t.get('design_space_s', 0):.2f} s, "
                  f"model build {t.get('build_s', 0):.2f} s, HiGHS {t.get('solve_s', 0):.2f} s{gap}); "
                  f"{result.stats.get('shapes_kept', 0):,} layouts kept of {result.stats.get('combinations', 0):,} combinations")
    for w in result.warnings:
        console.print(f"[yellow]warning[/]: {w}")


def print_design(design: Design, console: Console) -> None:
    p, c, lay = design.perf, design.cost, design.layout
    verdict = "[green]meets the target[/]" if design.meets_target else "[red]misses the target[/]"
    console.print(f"[bold]{design.label}[/]: {c.gpus:,} GPUs ({p.gpus:,} used), {c.nodes:,} nodes, "
                  f"tp={lay.tp} cp={lay.cp} pp={lay.pp} vp={lay.vp} dp={lay.dp} mbs={lay.microbatch_size}"
                  f"{expert_text(lay)}, "
                  f"{p.microbatches} microbatches")
    console.print(f"step time {p.step_time_s:.3f} s against a target of {design.target_step_time_s:.3f} s: {verdict}; "
                  f"MFU {p.mfu:.1%}, {p.hardware_tflops_per_gpu:,.0f} hardware TFLOP/s per GPU")
    t = Table(title="step time breakdown (s)", title_justify="left")
    for col in ("term", "time s", "window s", "exposed s", "NVLink bytes/GPU", "scale-out bytes/GPU"):
        t.add_column(col, justify="right" if col != "term" else "left")
    t.add_row("compute", f"{p.compute_s:.3f}", "", f"{p.compute_s:.3f}", "", "")
    t.add_row("bubble", f"{p.bubble_s:.3f}", "", f"{p.bubble_s:.3f}", "", "")
    for k, tr in p.traffic.items():
        t.add_row(k, f"{tr.time_s:.3f}", f"{tr.window_s:.3f}", f"{tr.exposed_s:.3f}", _gb(tr.nvlink_bytes),
                  _gb(tr.scaleout_bytes))
    if p.capacity_s > 0:
        t.add_row("link capacity", f"{max(p.scaleout_busy_s, p.nvlink_busy_s):.3f}", "", f"{p.capacity_s:.3f}", "", "")
    t.add_row("[bold]step[/]", f"[bold]{p.step_time_s:.3f}[/]", "", "", _gb(p.nvlink_bytes), _gb(p.scaleout_bytes))
    console.print(t)
    if design.margins:
        console.print(f"margins: slack {design.margins['slack_fraction']:.1%} of the target; survives a compute slowdown "
                      f"of {design.margins['compute_slowdown']:.1%} and a scale-out bandwidth derate of "
                      f"{design.margins['bandwidth_derate']:.1%}")
    print_uncalibrated([design], console)
    fit = "fits" if p.fits_memory else "[red]does NOT fit[/]"
    console.print(f"memory per GPU {p.memory_per_gpu_gb:,.1f} GB (states {p.memory_states_gb:,.1f} + activations "
                  f"{p.memory_activations_gb:,.1f}) of {p.hbm_usable_gb:,.1f} GB usable: {fit}; dominant: "
                  f"{', '.join(p.dominant_terms)}")
    f = c.fabric
    planes = f" in {f.planes} planes" if f.planes > 1 else ""
    console.print(f"fabric: {f.family}, {f.tiers} tier(s){planes}, {f.leaf_switches} leaf + {f.spine_switches} spine + "
                  f"{f.core_switches} core {c.switch} ({f.k} ports in use); links {f.links['node_leaf']:,} / {f.links['leaf_spine']:,} / {f.links['spine_core']:,}; "
                  f"racks {c.racks}; IT {c.it_power_kw:,.0f} kW, facility {c.facility_power_kw:,.0f} kW")
    console.print(bom_table(design))
    console.print(f"capex {_usd(c.capex_usd)}; TCO over {c.tco_years:g} years {_usd(c.tco_usd)}")
    for b in design.binding:
        flag = "[bold red]violated[/] " if b.get("violated") else "[bold]binding[/] " if b["binding"] else ""
        console.print(f"  {flag}{b['text']}")


def bom_table(design: Design) -> Table:
    t = Table(title="bill of materials", title_justify="left")
    for col in ("category", "part", "description", "qty", "unit $", "extended $", "source", "date"):
        t.add_column(col, justify="right" if col in ("qty", "unit $", "extended $") else "left", overflow="fold")
    for line in design.cost.bom:
        est = " (est.)" if line.price_is_estimate else ""
        t.add_row(line.category, line.part, line.description, f"{line.quantity:,}", f"{line.unit_price_usd:,.2f}",
                  f"{line.extended_usd:,.2f}", line.price_source[:40] + est, line.price_date)
    t.add_row("", "", "[bold]total[/]", "", "", f"[bold]{design.cost.capex_usd:,.2f}[/]", "", "")
    return t


def _efficiency(gpu) -> str:
    """GEMM efficiency of the compute model (bf16/fp8), or the flat compute efficiency."""
    if gpu.compute_model is not None:
        return f"GEMM {gpu.compute_model.gemm_efficiency_bf16:.2f}/{gpu.compute_model.gemm_efficiency_fp8:.2f}"
    return f"{gpu.compute_efficiency.bf16:.2f}/{gpu.compute_efficiency.fp8:.2f}"


def _table(title: str, columns: tuple[str, ...], rows: list[tuple]) -> Table:
    t = Table(title=title, title_justify="left")
    for col in columns:
        t.add_column(col)
    for row in rows:
        t.add_row(*row)
    return t


def catalog_tables(cat: Catalog) -> list[Table]:
    """The catalog as five tables: GPUs, platforms, NICs and switches, links, racks and facility."""
    gpus = _table("GPUs", ("id", "name", "bf16 TFLOP/s", "fp8 TFLOP/s", "HBM GB", "TDP W", "η bf16/fp8"), [
        (g.id, g.name, f"{g.bf16_dense_tflops:,.0f}", f"{g.fp8_dense_tflops:,.0f}", f"{g.hbm_gb:g}", f"{g.tdp_w:,.0f}",
         _efficiency(g)) for g in cat.gpus])
    platforms = _table("platforms", ("id", "gpu", "GPUs/domain", "GPUs/node", "NVLink GB/s", "rails", "NICs", "unit",
                                     "price", "kW", "date"), [
        (p.id, p.gpu, str(p.gpus_per_domain), str(p.gpus_per_node), f"{p.nvlink_gbyte_s:g}",
         ",".join(map(str, p.scaleout_nics_per_node)), ",".join(p.compatible_nics), p.unit, _price(p),
         f"{p.unit_power_kw:g}", p.price_date) for p in cat.platforms])
    network = _table("NICs and switches", ("id", "kind", "fabric", "generation", "speed / radix", "price", "W", "date"),
                     [(n.id, "NIC", n.fabric, n.generation, f"{n.speed_gbps:g} Gb/s", _price(n), f"{n.power_w:g}",
                       n.price_date) for n in cat.nics]
                     + [(s.id, "switch", s.fabric, s.generation, f"{s.radix}×{s.port_speed_gbps:g}G"
                         + "".join(f", {b * s.radix}×{s.port_speed_gbps / b:g}G split" for b in s.breakout), _price(s),
                         f"{s.power_w:g}", s.price_date) for s in cat.switches])
    links = _table("links (per link: cable + modules at both ends)",
                   ("id", "generation", "tier", "medium", "reach m", "$ per link", "W per link", "date"), [
        (x.id, x.generation, x.tier, x.medium, f"{x.max_reach_m:g}", _price(x, f"{x.usd_per_link:,.0f}"),
         f"{x.w_per_link:g}", x.price_date) for x in cat.links])
    racks = _table("racks and facility", ("id", "name", "usable kW", "usable RU", "price", "date"), [
        (r.id, r.name, f"{r.usable_kw:g}", str(r.usable_ru), _price(r), r.price_date) for r in cat.racks])
    if cat.facility is not None:
        f = cat.facility
        d = f.link_distance_m
        racks.caption = (f"facility: PUE {f.pue:g}, ${f.usd_per_kwh:g}/kWh, compute rack {f.compute_rack}, network rack "
                         f"{f.network_rack}, link distances {d.node_leaf:g} / {d.leaf_spine:g} / {d.spine_core:g} m")
    return [gpus, platforms, network, links, racks]


# --------------------------------------------------------------------------------- sweeps


def _usd_or_dash(value) -> str:
    return "—" if value is None else f"${value:,.0f}"


def sweep_table(report: dict) -> Table:
    t = Table(title=f"{report['scenario']}: sweep of {len(report['points'])} point(s)", title_justify="left")
    names = [a["name"] for a in report["axes"]]
    for name in names:
        t.add_column(name, justify="right")
    for col in ("status", "architecture", "GPUs", "nodes", "step s", "MFU", "capex", "TCO", "$/PFLOP/s", "TCO $/Mtok"):
        t.add_column(col, justify="left" if col in ("status", "architecture") else "right")
    for r in report["points"]:
        cells = [r["labels"].get(n, "") for n in names]
        if r.get("architecture"):
            cells += [r["status"], r["architecture"], f"{r['gpus']:,}", f"{r['nodes']:,}",
                      f"{r['step_time_s']:.2f} / {r['target_step_time_s']:.2f}", f"{r['mfu']:.1%}", _usd_or_dash(r["capex_usd"]),
                      _usd_or_dash(r["tco_usd"]), _usd_or_dash(r["capex_usd_per_pflop_s"]), f"${r['tco_usd_per_million_tokens']:,.2f}"]
        else:
            cells += [f"[red]{r['status']}[/]", (r.get("reason") or "")[:80]] + [""] * 8
        t.add_row(*cells)
    return t


def print_report(report: dict, console) -> None:
    console.print(sweep_table(report))
    for s in report["switch_points"]:
        console.print(f"switch point at {', '.join(f'{k}={v}' for k, v in s['labels'].items())}: "
                      f"{s['from']} → [bold]{s['to']}[/]")
    if not report["switch_points"]:
        console.print("no switch point: the best architecture is the same at every solved point")
    for inc in report["increments"]:
        console.print(f"to {', '.join(f'{k}={v}' for k, v in inc['labels'].items())}: add {inc['added_gpus']:,} GPUs, "
                      f"{inc['added_nodes']:,} nodes, {inc['added_switches']:,} switches, {inc['added_racks']:,} racks "
                      f"({_usd_or_dash(inc['capex_delta_usd'])})")
    for r in report["points"]:
        if r["status"] in ("infeasible", "error"):
            console.print(f"[yellow]point {r['index']}[/] ({point_label(r)}) {r['status']}: {r.get('reason')}")
