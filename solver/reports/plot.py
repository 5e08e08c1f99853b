"""PNG plot of a sweep (matplotlib, Agg backend): cost against the swept value, each point's
architecture written next to it, switch points marked with dashed vertical lines."""
from __future__ import annotations

from pathlib import Path

from ..files import atomic_path, current_run_id
from ..sweep.summary import x_axis
from .text import literal_for_plot as lit
from .text import quiet_plotting


def _x_values(report: dict) -> tuple[list, list[str], str]:
    """The year (growth sweeps) or the swept value (one numeric axis) at true spacing, else the point's position."""
    points = report["points"]
    x = x_axis(report)
    if x["kind"] == "step":  # growth: year 0, 1, … with the growth rule in the axis label
        return x["values"], [str(v) for v in x["values"]], x["description"]
    if x["kind"] == "value":
        name = x["title"]
        return x["values"], [p["labels"][name] for p in points], name
    labels = [", ".join(str(v) for v in p["labels"].values()) for p in points]
    return list(range(len(points))), labels, x["description"]


def _log_x(xs: list, report: dict) -> bool:
    """Geometric sweeps read best on a log axis: one numeric axis, positive, spanning 4× or more."""
    numeric = len(report["axes"]) == 1 and report["axes"][0]["kind"] not in ("model", "text")
    return numeric and min(xs) > 0 and max(xs) / min(xs) >= 4


def short_architecture(label: str) -> str:
    """'dgx-b200 · 1×cx7-ndr · qm9700, 2-tier' → 'dgx-b200 · 1×cx7-ndr · 2-tier' (keeps the plot readable)."""
    parts = [p.strip() for p in label.split("·")]
    tail = parts[-1].split(",")
    tiers = tail[1].strip() if len(tail) > 1 else ""
    return " · ".join(parts[:-1] + ([tiers] if tiers else []))


def plot_series(report: dict, solved: list[tuple]) -> list[tuple[str, list[tuple]]]:
    """The lines of the plot: one per named model when a model axis is swept together with another
    axis (two models' points are never joined into one line), else one line through every point."""
    models = [a["name"] for a in report["axes"] if a["kind"] == "model"]
    if not models or len(report["axes"]) == len(models):
        return [("", solved)]
    groups: dict[str, list[tuple]] = {}
    for x, p in solved:
        groups.setdefault(", ".join(str(p["labels"][m]) for m in models), []).append((x, p))
    return [(name, sorted(group, key=lambda xp: xp[0])) for name, group in groups.items()]


def write_plot(report: dict, path: str | Path) -> Path:
    """Capex and TCO (millions of USD) against the swept value, written atomically as PNG."""
    with atomic_path(path) as tmp:
        draw_plot(report, tmp, current_run_id())
    return Path(path)


@quiet_plotting
def draw_plot(report: dict, file: Path, run_id: str | None) -> None:
    """Draw the sweep's plot into `file` (PNG, carrying `run_id`); `write_plot` or the side process
    (`side_process.py`) gives it the temporary file of an atomic write."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs, xlabels, xname = _x_values(report)
    points = report["points"]
    solved = [(x, p) for x, p in zip(xs, points) if p.get("architecture")]
    fig, ax = plt.subplots(figsize=(10, 5.5), dpi=110)
    if solved:
        for n, (name, group) in enumerate(plot_series(report, solved)):
            sx = [x for x, _ in group]
            suffix = f" ({lit(name)})" if name else ""
            ax.plot(sx, [p["capex_usd"] / 1e6 for _, p in group], "o-", color=f"C{n % 10}", label="capex" + suffix)
            ax.plot(sx, [p["tco_usd"] / 1e6 for _, p in group], "s--", color=f"C{n % 10}", alpha=0.7,
                    label="TCO" + suffix)
        # each point's marker is coloured by its architecture (named in the legend); GPUs written next to it
        colours: dict[str, str] = {}
        for x, p in solved:
            arch = short_architecture(p["architecture"])
            first = arch not in colours
            colours.setdefault(arch, f"C{(len(colours) + 2) % 10}")
            ax.plot([x], [p["capex_usd"] / 1e6], "D", ms=9, color=colours[arch], zorder=3, label=lit(arch) if first else None)
            ax.annotate(f"{p['gpus']:,} GPUs", (x, p["capex_usd"] / 1e6), textcoords="offset points",
                        xytext=(7, -12), fontsize=7)
    at = {p["index"]: x for x, p in zip(xs, points)}
    for i, s in enumerate(report.get("switch_points", [])):
        ax.axvline(at[s["index"]], color="tab:red", linestyle=":", label="architecture changes" if i == 0 else None)
    for x, p in zip(xs, points):
        if not p.get("architecture"):
            ax.axvline(x, color="grey", alpha=0.3)
            ax.annotate(lit(p["status"]), (x, 0), textcoords="offset points", xytext=(3, 3), fontsize=7, color="grey")
    if _log_x(xs, report):
        ax.set_xscale("log")
        ax.minorticks_off()
    ax.set_xticks(xs, [lit(label) for label in xlabels], rotation=30 if len(xs) > 6 else 0, fontsize=8)
    ax.set_xlabel(lit(xname))
    ax.set_ylabel("million USD")
    x = x_axis(report)
    ax.set_title(f"{lit(report['scenario'])}: cost by {x['title']}" if x["kind"] == "step" else
                 f"{lit(report['scenario'])}: cost against the swept value")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    ax.margins(x=0.08, y=0.15)
    save_png(fig, file, run_id)
    plt.close(fig)


def save_png(fig, file: Path, run_id: str | None) -> None:
    """Lay the figure out once and save it. `tight_layout` leaves a placeholder layout engine behind, which
    makes `savefig` lay out and draw the figure once more before the real draw; without it the pixels are
    the same and the save costs one draw (0.1 s of a 100-point sweep's plot)."""
    fig.tight_layout()
    fig.set_layout_engine("none")
    fig.savefig(file, format="png", metadata={"fabricplan run id": run_id})
