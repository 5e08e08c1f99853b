"""A power-first site in the terminal (solver/optimize/site.py): every cooling × power-profile variant's best,
the choice, throughput per provisioned MW, and the planners' rule of thumb beside it."""
from __future__ import annotations

from rich.console import Console

from .tables import Column, make_table
from .text import safe


def print_site(answer, console: Console) -> None:
    data = answer.to_dict()
    rows = [v for v in data["variants"] if "step_time_s" in v]
    cols = [
        Column("variant", [safe(v["variant"]) for v in rows], number=False, min_width=18),
        Column("GPUs", [f"{v['gpus']:,}" for v in rows]),
        Column("step s", [f"{v['step_time_s']:,.2f}" for v in rows]),
        Column("avg facility MW", [f"{v['facility_kw'] / 1000:,.1f}" for v in rows]),
        Column("cost", [f"${v['cost_usd']:,.0f}" for v in rows]),
    ]
    console.print(make_table(f"site: {data['power_mw']:g} MW provisioned (peak ÷ average {data['peak_to_average']:g}); "
                             "each cooling × GPU power profile solved exactly", cols, console.width))
    if data["status"] != "optimal":
        console.print("site: no variant fits the site")
        return
    chosen = answer.variant.profile if answer.variant is not None else None  # the table's words: watts, then the id
    profile = f"{chosen.gpu_w:g} W ({chosen.id})" if chosen is not None else "rated power"
    console.print(f"site: chosen {data['cooling']} cooling, {data['gpu']} at {profile}: {data['gpus']:,} GPUs, "
                  f"{data['facility_mw']:,.1f} MW average at the facility ({data['sustained_power_fraction']:.0%} of the "
                  f"nameplate {data['nameplate_facility_mw']:,.1f} MW its racks are sized for), "
                  f"{data['provisioned_mw']:,.1f} MW provisioned of {data['power_mw']:g}; {data['tokens_per_s']:,.0f} tokens/s = "
                  f"{data['tokens_per_s_per_provisioned_mw']:,.0f} tokens/s per provisioned MW")
    console.print(f"site: rule of thumb (MW ÷ all-in kW per GPU, same platform, PUE and headroom): "
                  f"{data['rule_of_thumb_gpus']:,} GPUs, pricing neither the network, the cooling plant nor the "
                  f"layout; the solve places {data['gpus']:,}")
