"""Rent or buy in the terminal (solver/rentals.py): one compact, width-aware table per solve, and
for `objective: rent_or_buy` owning and renting ranked together."""
from __future__ import annotations

from rich.console import Console

from ..rentals import ranked_options
from ..results import Design
from .tables import Column, make_table
from .text import safe


def _usd(value: float) -> str:
    return f"${value:,.0f}"


def _busy(rb) -> str:
    """The break-even as months of busy life and share of the time (`never` within the life)."""
    be = rb.break_even
    if be.months is None:
        return "never"
    return f"{be.months:,} mo, {be.utilisation:.0%}"


def rent_columns(designs: list[Design]) -> list[Column]:
    ds = [d for d in designs if d.rent is not None]
    rbs = [d.rent for d in ds if d.rent is not None]
    return [
        Column("#", [str(d.rank) for d in ds]),
        Column("offer", [safe(rb.best.offer_id) + ("" if rb.best.network_matches else " (thinner network)")
                         + (" est." if rb.best.price_is_estimate else "") + (" ⚠" if rb.best.too_large else "")
                         for rb in rbs], number=False, min_width=14),
        Column("GPU-hours", [f"{rb.best.gpus * rb.best.paid_hours:,.0f}" for rb in rbs]),
        Column("$/GPU-h", [f"{rb.best.usd_per_gpu_hour:,.2f}" for rb in rbs]),
        Column("rent", [_usd(rb.best.rent_usd) for rb in rbs]),
        Column("own,\nrun share", [_usd(rb.own_usd) for rb in rbs]),
        Column("owning wins\nif busy ≥", [_busy(rb) for rb in rbs]),
    ]


def rent_table(designs: list[Design], width: int | None = None, wide: bool = False):
    rbs = [d.rent for d in designs if d.rent is not None]
    horizon = rbs[0].horizon if rbs else ""
    what = ("renting the GPU-hours of each design's training run" if horizon == "training run"
            else "renting for the TCO years")
    years = rbs[0].owning.years if rbs else 0
    title = (f"rent or buy: {what}; own = the run's share of owning for a {years:g}-year life; "
             "busy ≥ = against the cheapest committed offer")
    return make_table(title, rent_columns(designs), width, wide)


def own_lines(designs: list[Design]) -> list[str]:
    """Per design: the run's share of owning line by line, the break-even offer, and the flags; then what
    owning includes and leaves out (once)."""
    lines = []
    rbs = [(d.rank, d.rent) for d in designs if d.rent is not None]
    for rank, rb in rbs:
        o = rb.owning
        parts = " + ".join(f"{k} {_usd(v)}" for k, v in o.run_usd().items())
        lines.append(f"#{rank} own {o.hours:,.0f} h of a {o.life_hours:,.0f} h life ({o.share:.2%}): {parts} "
                     f"= {_usd(o.own_usd)}")
        be = rb.break_even
        q = be.quote
        against = f"{q.offer_id} ({q.term}, ${q.usd_per_gpu_hour:,.2f}/GPU-h{', est.' if q.price_is_estimate else ''})"
        if be.months is None:
            lines.append(f"#{rank} against {against}: owning never wins within the {be.life_months:,.0f}-month life")
        else:
            lines.append(f"#{rank} against {against}: owning wins if the cluster is busy ≥ {be.months:,} months of "
                         f"its {be.life_months:,.0f} (≥ {be.utilisation:.0%} of the time)")
        lines.extend(f"⚠ #{rank} {flag}" for flag in rb.flags())
    if rbs:
        from ..costing.owned import OWN_INCLUDES, OWN_LEAVES_OUT

        lines.append("owning includes: " + "; ".join(OWN_INCLUDES))
        lines.append("owning leaves out: " + "; ".join(OWN_LEAVES_OUT))
    return lines


def options_table(designs: list[Design], width: int | None = None, wide: bool = False):
    """Owning and renting ranked together (objective: rent_or_buy)."""
    options = ranked_options(designs)
    cols = [
        Column("rank", [str(o["rank"]) for o in options]),
        Column("choice", [o["choice"] for o in options], number=False, min_width=6),
        Column("design", [f"#{o['design_rank']}" for o in options]),
        Column("offer", [safe(o["offer"] or "") for o in options], number=False, min_width=14, drop=1),
        Column("cost", [_usd(o["cost_usd"]) for o in options]),
    ]
    return make_table("owning and renting, cheapest first", cols, width, wide)


def print_rent(designs: list[Design], console: Console, wide: bool = False) -> None:
    """The rent-or-buy table when a design has a rental offer; the joint ranking for objective rent_or_buy."""
    if not any(d.rent is not None for d in designs):
        return
    console.print(rent_table(designs, console.width, wide))
    for line in own_lines(designs):
        console.print(safe(line))
    if designs[0].objective == "rent_or_buy":
        console.print(options_table(designs, console.width, wide))
