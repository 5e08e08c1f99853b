"""Rent or buy in the terminal (solver/rentals.py): one compact, width-aware table per solve, and
for `objective: rent_or_buy` owning and renting ranked together."""
from __future__ import annotations

from rich.console import Console

from ..rentals import ranked_options
from ..results import Design
from .grouping import grouped, grouped_each, rank_list
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
        Column("own, run share", [_usd(rb.own_usd) for rb in rbs]),
        Column("owning wins if busy ≥", [_busy(rb) for rb in rbs]),
    ]


def rent_table(designs: list[Design], width: int | None = None, wide: bool = False):
    rbs = [d.rent for d in designs if d.rent is not None]
    horizon = rbs[0].horizon if rbs else ""
    what = ("renting the GPU-hours of each design's training run" if horizon == "training run"
            else "renting for the TCO years")
    years = rbs[0].owning.years if rbs else 0
    title = f"rent or buy: {what}; own = the run's share of owning for a {years:g}-year life"
    return make_table(title, rent_columns(designs), width, wide)


def _against(rb) -> str:
    q = rb.break_even.quote
    return f"{q.offer_id} ({q.term}, ${q.usd_per_gpu_hour:,.2f}/GPU-h{', est.' if q.price_is_estimate else ''})"


def _by_offer(designs: list[Design]) -> dict[str, list[Design]]:
    """The designs by the offer their break-even is against, in rank order."""
    out: dict[str, list[Design]] = {}
    for d in designs:
        if d.rent is not None:
            out.setdefault(_against(d.rent), []).append(d)
    return out


def _months(designs: list[Design]) -> str:
    """"#1, #2 ≥ 26 months of its 60 (≥ 42% of the time)", or "never within its life" (each distinct figure once,
    with its ranks)."""
    def text(d: Design) -> str:
        assert d.rent is not None
        be = d.rent.break_even
        return ("never within its life" if be.months is None else
                f"≥ {be.months:,} months of its {be.life_months:,.0f} (≥ {be.utilisation:.0%} of the time)")
    return ", ".join(f"{ranks} {t}" for ranks, t in grouped(designs, text))


def own_lines(designs: list[Design]) -> list[str]:
    """The first design's share of owning line by line (the others': one line saying where they are; their totals
    are the table's); one line of break-even months per offer it is against, with the ranks; the flags, each
    distinct one once with its ranks (a too-large block once per provider limit); what owning includes and leaves
    out (once)."""
    rented = [d for d in designs if d.rent is not None]
    if not rented:
        return []
    first, rb = rented[0], rented[0].rent
    assert rb is not None
    o = rb.owning
    parts = " + ".join(f"{k} {_usd(v)}" for k, v in o.run_usd().items())
    lines = [f"#{first.rank} own {o.hours:,.0f} h of a {o.life_hours:,.0f} h life ({o.share:.2%}): {parts} "
             f"= {_usd(o.own_usd)}"]
    others = [d.rank for d in rented[1:]]
    if others:
        lines.append(f"{rank_list(others)}: each one's own, run share line by line is in the JSON "
                     "(designs[].rent_or_buy.owning) and the Rent-or-buy sheet")
    lines.append("owning wins, against the cheapest committed offer, if the cluster is busy: "
                 + "; ".join(f"{_months(group)} against {text}" for text, group in _by_offer(rented).items()))
    lines += block_lines(rented)
    lines += [f"⚠ {r} {text}" for r, text in grouped_each(rented, lambda d: d.rent.other_flags())]
    from ..costing.owned import OWN_INCLUDES, OWN_LEAVES_OUT

    lines.append("owning includes: " + "; ".join(OWN_INCLUDES))
    lines.append("owning leaves out: " + "; ".join(OWN_LEAVES_OUT))
    return lines


def block_lines(designs: list[Design]) -> list[str]:
    """One line per provider limit (max GPUs and its source) that some design's rented block exceeds: the ranks,
    offers and GPUs that exceed it ("⚠ #1, #2 a, b: 2,048 GPUs; #5 c: 4,096 GPUs exceed the 1,536 one provider
    plausibly rents in one block (source)")."""
    limits: dict[tuple[int, str], dict[tuple[str, int], list[int]]] = {}
    for d in designs:
        assert d.rent is not None
        big = [q for q in d.rent.quotes if q.too_large]
        for limit in dict.fromkeys((q.max_gpus, q.max_gpus_source) for q in big):
            offers = ", ".join(q.offer_id for q in big if (q.max_gpus, q.max_gpus_source) == limit)
            limits.setdefault(limit, {}).setdefault((offers, big[0].gpus), []).append(d.rank)
    return ["⚠ " + "; ".join(f"{rank_list(ranks)} {offers}: {gpus:,} GPUs" for (offers, gpus), ranks in groups.items())
            + f" exceed the {n:,} one provider plausibly rents in one block ({source})"
            for (n, source), groups in limits.items()]


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
