"""PNG of a plan (matplotlib, Agg backend): the spend per period as bars next to the spend of buying
each period from scratch, and the GPUs owned per period on a second axis; each bar is labelled with
the architecture that runs the job."""
from __future__ import annotations

from pathlib import Path

from ..files import atomic_path, current_run_id
from .plot import save_png, short_architecture
from .text import literal_for_plot as lit
from .text import quiet_plotting


def write_plan_plot(report: dict, path: str | Path) -> Path:
    """Spend per period (million USD, plan and from scratch) and GPUs owned, written atomically as PNG."""
    with atomic_path(path) as tmp:
        draw_plan_plot(report, tmp, current_run_id())
    return Path(path)


@quiet_plotting
def draw_plan_plot(report: dict, file: Path, run_id: str | None) -> None:
    """Draw the plan's plot into `file` (PNG, carrying `run_id`): see `plot.draw_plot`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    periods = report["periods"]
    labels = [lit(p["label"]) for p in periods]  # user text: `$` drawn literally, never as mathtext
    xs = list(range(len(periods)))
    fig, ax = plt.subplots(figsize=(10, 5.5), dpi=110)
    width = 0.38
    plan = [p["spend_usd"] / 1e6 for p in periods]
    ax.bar([x - width / 2 for x in xs], plan, width, label="plan (purchases carried forward)", color="tab:blue")
    scratch = (report.get("comparison", {}).get("from_scratch") or {}).get("periods", [])
    if scratch:
        ax.bar([x + width / 2 for x in xs], [(s.get("spend_usd") or 0) / 1e6 for s in scratch], width,
               label="each period from scratch", color="tab:grey", alpha=0.6)
    for x, p, y in zip(xs, periods, plan):
        ax.annotate(lit(short_architecture(p["architecture"])) + (f" (cluster {p['cluster']})" if p["cluster"] > 1 else ""),
                    (x - width / 2, y), textcoords="offset points", xytext=(0, 4), ha="center", fontsize=7, rotation=90)
    ax.set_xticks(xs, labels)
    ax.set_ylabel("spend, million USD" + (" (capex + energy)" if report["objective"] == "tco" else " (capex)"))
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(xs, [p["gpus_owned"] for p in periods], "o-", color="tab:orange", label="GPUs owned")
    ax2.set_ylabel("GPUs owned")
    ax2.set_ylim(bottom=0)
    total = report["totals"]["discounted_usd"] / 1e6
    ax.set_title(f"{lit(report['scenario'])}: plan, discounted total {lit(f'${total:,.1f}M')}")
    handles = ax.get_legend_handles_labels()
    more = ax2.get_legend_handles_labels()
    ax.legend(handles[0] + more[0], handles[1] + more[1], loc="upper left", fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    save_png(fig, file, run_id)
    plt.close(fig)
