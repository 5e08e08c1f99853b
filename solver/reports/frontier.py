"""Reports of the cost–speed frontier and the next faster design (SPEC §7 v3, issue 24 item 5):
the terminal table and lines, and the PNG (the workbook's Frontier sheet: frontier_sheet.py). The numbers come from `optimize/frontier.py` (`Frontier.to_dict`, the `next_faster` dict)."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console

from ..results import SolveResult
from .tables import Column, make_table
from .text import literal_for_plot as lit
from .text import safe


def usd_per_mtok(value: float) -> str:
    """A cost per million tokens: three significant figures below $10, else cents."""
    return f"${value:,.2f}" if value >= 10 else f"${value:.3g}"


def cost_label(cost: str) -> str:
    return "TCO" if cost == "tco" else "capex"


# ----------------------------------------------------------------------------------- terminal


def print_next_faster(result: SolveResult, console: Console) -> None:
    """Each design's cost per million tokens, then the next faster design of #1 (and what it took)."""
    if not result.designs:
        return
    first = result.designs[0]
    basis = f"{cost_label('tco' if first.objective in ('tco', 'rent_or_buy') else 'capex')} over {first.cost.tco_years:g} years"
    console.print(f"cost per million tokens ({basis}): "
                  + ", ".join(f"#{d.rank} {usd_per_mtok(d.cost_per_million_tokens_usd)}" for d in result.designs))
    nf = result.next_faster
    if nf is None:
        return
    extra = f" (found in {nf['time_s']:.2f} s of search)" if nf.get("time_s") else ""
    tail = f", {usd_per_mtok(nf['cost_per_million_tokens_usd'])} per million tokens" if nf.get("found") else ""
    console.print(safe(nf["text"] + tail) + extra)
    if nf.get("status") not in ("optimal", None):
        console.print(f"[yellow]warning[/]: the next faster design is {safe(nf['status'])}, not proven")


def frontier_columns(front: dict) -> list[Column]:
    points = front["points"]
    money = cost_label(front["cost"])
    c0 = points[0]["cost_usd"] if points else 1.0
    t0 = points[0]["step_time_s"] if points else 1.0
    return [
        Column("#", [str(p["point"]) for p in points]),
        Column(money, [f"${p['cost_usd']:,.0f}" for p in points]),
        Column("step s", [f"{p['step_time_s']:.4g}" for p in points]),
        Column(f"{money} vs 1", [_pct(p["cost_usd"] / c0 - 1) for p in points]),
        Column("step vs 1", [_pct(p["step_time_s"] / t0 - 1) for p in points]),
        Column("$/Mtok", [usd_per_mtok(p["cost_per_million_tokens_usd"]) for p in points], drop=2),
        Column("GPUs", [f"{p['gpus']:,}" for p in points], drop=1),
        Column("architecture", [safe(p["architecture"]) for p in points], number=False, min_width=16),
        Column("layout tp·cp·pp·vp·dp·mbs", [layout_label(p["layout"]) for p in points], number=False, min_width=12,
               drop=3),
    ]


def _pct(x: float) -> str:
    return "—" if abs(x) < 5e-5 else f"{'−' if x < 0 else '+'}{abs(x):.1%}"


def layout_label(lay: dict) -> str:
    """A layout from a design's JSON as tp·cp·pp·vp·dp·microbatch (and its expert parallelism)."""
    experts = f" ep{lay['ep']}" if lay.get("ep", 1) > 1 else ""
    return f"{lay['tp']}·{lay['cp']}·{lay['pp']}·{lay['vp']}·{lay['dp']}·{lay['microbatch_size']}{experts}"


def print_frontier(front: dict, scenario: str, console: Console, wide: bool = False) -> None:
    """The frontier table (cheapest first), how the search ended, and its time."""
    title = (f"{safe(scenario)}: cost–speed frontier, {len(front['points'])} point(s), status {front['status']} "
             f"(each the cheapest design at least as fast)")
    console.print(make_table(title, frontier_columns(front), console.width, wide))
    time_s = front.get("time_s") or 0.0
    console.print(f"frontier: {safe(front['ended'])}; {time_s:.2f} s")
    if front["status"] != "optimal":
        console.print(f"[yellow]warning[/]: the frontier is {safe(front['status'])}: {safe(front['ended'])}")


# ----------------------------------------------------------------------------------- PNG


def labelled(points: list[dict], most: int = 12) -> list[dict]:
    """The points to label: all when few; else only where the GPU count or platform changes (the rest differ in
    NICs or fabric and sit next to a labelled one)."""
    if len(points) <= most:
        return points
    return [p for i, p in enumerate(points)
            if i == 0 or (p["gpus"], p["platform"]) != (points[i - 1]["gpus"], points[i - 1]["platform"])]


def write_frontier_plot(front: dict, scenario: str, path: str | Path) -> Path:
    """Capex (or TCO) in millions against step time, one marker per point, numbered; written atomically."""
    import matplotlib  # lazy: the command line imports this module without plotting

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..files import atomic_path, current_run_id

    points = front["points"]
    money = cost_label(front["cost"])
    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=110)
    xs = [p["step_time_s"] for p in points]
    ys = [p["cost_usd"] / 1e6 for p in points]
    ax.step(xs, ys, where="post", color="tab:blue", alpha=0.4)
    ax.plot(xs, ys, "o", color="tab:blue", label=f"frontier: the cheapest design at least as fast ({money})")
    for i, p in enumerate(labelled(points)):  # labels alternate above and below: neighbours may be close
        ax.annotate(f"{p['point']}: {p['gpus']:,} GPUs {lit(p['platform'])}", (p["step_time_s"], p["cost_usd"] / 1e6),
                    textcoords="offset points", xytext=(6, 5 if i % 2 == 0 else -12), fontsize=7)
    if xs and max(xs) >= 10 * min(xs):  # a front over orders of magnitude (from one node up) reads on log axes
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("step time (s)")
    ax.set_ylabel(f"{money} (million USD)")
    ax.set_title(f"{lit(scenario)}: cost–speed frontier, {len(points)} point(s), {front['status']}")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    ax.margins(x=0.12, y=0.12)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"fabricplan run id": current_run_id()})  # the set's run id (issue 44)
    plt.close(fig)
    return Path(path)
