"""A power-first site in the terminal (solver/optimize/site.py): every cooling × power-profile variant's best,
the choice, throughput per provisioned MW, and the planners' rule of thumb beside it."""
from __future__ import annotations

from rich.console import Console

from .tables import Column, make_table
from .text import safe


def print_site(answer, console: Console) -> None:
    print_site_data(answer.to_dict(), console)


def _speed_column(rows: list[dict]) -> Column:
    """A training variant's step time, or a serving fleet's decode TPOT p90 (optimize/serving_site.py)."""
    if rows and "tpot_p90_s" in rows[0]:
        return Column("TPOT p90 ms", [f"{v['tpot_p90_s'] * 1000:,.2f}" for v in rows])
    return Column("step s", [f"{v['step_time_s']:,.2f}" for v in rows])


def _mw(value: float) -> str:
    """MW to one decimal; a site under 1 MW (a serving hall of kilowatts) to four."""
    return f"{value:,.1f}" if value >= 1 else f"{value:,.4f}"


def print_site_data(data: dict, console: Console) -> None:
    """The site's lines from its JSON block (`SiteAnswer.to_dict`): training and serving solves print the same."""
    rows = [v for v in data["variants"] if "step_time_s" in v or "tpot_p90_s" in v]
    cols = [
        Column("variant", [safe(v["variant"]) for v in rows], number=False, min_width=18),
        Column("GPUs", [f"{v['gpus']:,}" for v in rows]),
        _speed_column(rows),
        Column("avg facility MW", [_mw(v['facility_kw'] / 1000) for v in rows]),
        Column("cost", [f"${v['cost_usd']:,.0f}" for v in rows]),
    ]
    console.print(make_table(f"site: {data['power_mw']:g} MW provisioned (peak ÷ average {data['peak_to_average']:g}); "
                             "each cooling × GPU power profile solved exactly", cols, console.width))
    if data["status"] != "optimal":
        console.print("site: no variant fits the site")
        return
    chosen = data.get("power_profile")  # the table's words: watts, then the id
    profile = f"{data['power_profile_gpu_w']:g} W ({chosen})" if chosen is not None else "rated power"
    tokens = "output tokens/s at the peak" if rows and "tpot_p90_s" in rows[0] else "tokens/s"
    console.print(f"site: chosen {data['cooling']} cooling, {data['gpu']} at {profile}: {data['gpus']:,} GPUs, "
                  f"{_mw(data['facility_mw'])} MW average at the facility ({data['sustained_power_fraction']:.0%} of the "
                  f"nameplate {_mw(data['nameplate_facility_mw'])} MW its racks are sized for), "
                  f"{_mw(data['provisioned_mw'])} MW provisioned of {data['power_mw']:g}; {data['tokens_per_s']:,.0f} {tokens} = "
                  f"{data['tokens_per_s_per_provisioned_mw']:,.0f} {tokens} per provisioned MW")
    console.print(f"site: rule of thumb (MW ÷ all-in kW per GPU, same platform, PUE and headroom): "
                  f"{data['rule_of_thumb_gpus']:,} GPUs, pricing neither the network, the cooling plant nor the "
                  f"layout; the solve places {data['gpus']:,}")
