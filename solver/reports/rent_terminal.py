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


def _months(month: int | None) -> str:
    if month is None:
        return "never"
    return f"month {month:,}"


def rent_columns(designs: list[Design]) -> list[Column]:
    ds = [d for d in designs if d.rent is not None]
    rbs = [d.rent for d in ds if d.rent is not None]
    return [
        Column("#", [str(d.rank) for d in ds]),
        Column("offer", [safe(rb.best.offer_id) + ("" if rb.best.network_matches else " (thinner network)")
                         + (" est." if rb.best.price_is_estimate else "") for rb in rbs], number=False, min_width=14),
        Column("GPU-hours", [f"{rb.best.gpus:,}×{rb.best.paid_hours:,.0f} h" for rb in rbs], drop=2),
        Column("$/GPU-h", [f"{rb.best.usd_per_gpu_hour:,.2f}" for rb in rbs], drop=3),
        Column("rent", [_usd(rb.best.rent_usd) for rb in rbs]),
        Column("own", [_usd(rb.own_usd) for rb in rbs]),
        Column("TCO", [_usd(rb.tco_usd) for rb in rbs], drop=1),
        Column("break-even", [_months(rb.break_even_month) for rb in rbs]),
    ]


def rent_table(designs: list[Design], width: int | None = None, wide: bool = False):
    rbs = [d.rent for d in designs if d.rent is not None]
    horizon = rbs[0].horizon if rbs else ""
    what = ("renting the GPU-hours of each design's training run" if horizon == "training run"
            else "renting for the TCO years")
    title = f"rent or buy: {what}; own = capex + energy for the same hours"
    return make_table(title, rent_columns(designs), width, wide)


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
    if designs[0].objective == "rent_or_buy":
        console.print(options_table(designs, console.width, wide))
