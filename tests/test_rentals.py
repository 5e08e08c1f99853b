"""Rent or buy (SPEC §6.2 Rentals; solver/rentals.py): catalog offers, the rental cost of a design's
GPU-hours, owning for the same hours, the break-even month, objective rent_or_buy, the terminal.

Expected numbers are worked by hand in the comments from the shipped catalog's offers.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from test_cli import run
from test_planner_cli import run_in_pty

import solver
from solver import api
from solver.errors import InputError
from solver.inputs import load_catalog
from solver.inputs.ownership_schema import Ownership
from solver.inputs.yaml_safe import read_yaml
from solver.rentals import DEFAULT_MAX_GPUS, busy_hours_to_break_even, rent_or_buy
from solver.reports.rent_terminal import print_rent
from solver.units import HOURS_PER_MONTH

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "rent-or-buy.yaml"


def _cost(**over) -> SimpleNamespace:
    """A costed H100 design as solver/rentals.py reads it: 128 job nodes of 8 GPUs (1,024 GPUs, no spares),
    8 rails, 1,200 kW IT at PUE 1.25."""
    base = dict(platform="hgx-h100", job_nodes=128, rails_per_node=8, tco_years=5.0, it_power_kw=1200.0,
                facility_power_kw=1500.0, usd_per_kwh=0.08, capex_usd=40_000_000.0, tco_usd=45_256_000.0, gpus=1024)
    base.update(over)
    return SimpleNamespace(**base)


def test_rental_cost_own_share_and_break_even_by_hand():
    cat = load_catalog()
    rb = rent_or_buy(cat, _cost(), nic_speed_gbps=400, train_days=30)  # type: ignore[arg-type]
    assert rb is not None and rb.horizon == "training run"
    # GPUs = 128 nodes · 8 = 1,024; hours = 30 days · 24 = 720 h
    # h100-1yr-contract-index: 12-month commitment: 1,024 · 8,760 · $2.35 = $21,080,064.00 (not 720 h)
    # together-h100-reserved:  3-month commitment:  1,024 · 2,190 · $3.19 = $7,153,766.40
    # lambda-h100-on-demand:   1,024 · 720 · $3.49 = $2,573,107.20
    # aws-p5-capacity-block:   1,024 · 720 · $4.916 = $3,624,468.48 (but 1,024 GPUs > 512 per block: too large)
    # aws-p5-on-demand:        1,024 · 720 · $6.88 = $5,072,486.40
    rents = {q.offer_id: q.rent_usd for q in rb.quotes}
    assert rents == pytest.approx({"lambda-h100-on-demand": 2_573_107.20, "aws-p5-capacity-block": 3_624_468.48,
                                   "aws-p5-on-demand": 5_072_486.40, "together-h100-reserved": 7_153_766.40,
                                   "h100-1yr-contract-index": 21_080_064.00})
    assert rb.best.offer_id == "lambda-h100-on-demand"
    assert [q.offer_id for q in rb.quotes if q.too_large] == ["aws-p5-capacity-block"]
    # the run's share of owning, defaults of inputs/ownership_schema.py (5 years, 10 % residual, $184.06/kW-month,
    # 4 %/year support, $400/GPU-year staff, 8 % cost of capital):
    #   depreciation 40,000,000 · 0.9 = 36,000,000; financing 0.08 · 44,000,000 / 2 · 5 = 8,800,000
    #   colocation 184.06 · 1,200 · 60 = 13,252,320; support 0.04 · 40,000,000 · 5 = 8,000,000
    #   staff 400 · 1,024 · 5 = 2,048,000; fixed = 68,100,320 over 43,800 h
    #   share 720 / 43,800; energy 1,500 · 0.08 · 720 = 86,400
    #   own = 68,100,320 · 720 / 43,800 + 86,400 = 1,119,457.32 + 86,400 = 1,205,857.32
    assert rb.owning.fixed_life_usd == pytest.approx(68_100_320.0)
    assert rb.own_usd == pytest.approx(1_205_857.32, abs=0.01)
    assert rb.cheaper == "buy"
    # break-even against the cheapest committed offer with a block one provider rents: h100-1yr-contract-index
    # (the capacity block is cheaper per hour than the reserved contract only above it, and too large):
    #   B = 68,100,320 / (1,024 · 2.35 − 120) = 68,100,320 / 2,286.40 = 29,784.96 h → 40.8 months → 41 of 60; 68.0 %
    be = rb.break_even
    assert be.quote.offer_id == "h100-1yr-contract-index" and be.against_committed
    assert be.busy_hours == pytest.approx(29_784.96, abs=0.01)
    assert be.months == 41 and be.utilisation == pytest.approx(29_784.96 / 43_800, abs=1e-6)
    assert all(q.network_matches for q in rb.quotes)  # 8 × 400 Gb/s per 8 GPUs on both sides


def test_horizon_is_the_tco_years_without_train_tokens():
    rb = rent_or_buy(load_catalog(), _cost(), nic_speed_gbps=400, train_days=None)  # type: ignore[arg-type]
    assert rb is not None and rb.horizon == "tco years"
    # 5 years · 8,760 h = 43,800 h = the whole life: own = fixed + energy = 68,100,320 + 120 · 43,800 = 73,356,320
    assert rb.hours == 43_800.0
    assert rb.own_usd == pytest.approx(73_356_320.0)
    # the reserved index is now the cheapest that fits: 1,024 · 43,800 · $2.35 = $105,400,320
    assert rb.best.offer_id == "h100-1yr-contract-index" and rb.best.rent_usd == pytest.approx(105_400_320.0)
    assert rb.cheaper == "buy"


def test_ownership_inputs_from_the_scenario():
    own = Ownership(depreciation_years=4, residual_fraction=0, colocation_usd_per_kw_month=0,
                    support_fraction_per_year=0, staff_usd_per_gpu_year=0, cost_of_capital=0)
    rb = rent_or_buy(load_catalog(), _cost(), nic_speed_gbps=400, train_days=30, ownership=own)  # type: ignore[arg-type]
    assert rb is not None
    # capex alone over 4 years: 40,000,000 · 720 / 35,040 + 86,400 = 821,917.81 + 86,400
    assert rb.own_usd == pytest.approx(908_317.81, abs=0.01)
    assert rb.owning.to_dict()["sources"]["depreciation_years"] == "scenario"
    assert "CBRE" in Ownership().sources()["colocation_usd_per_kw_month"]


def test_break_even_never_when_renting_costs_no_more_than_energy_or_beyond_the_life():
    assert busy_hours_to_break_even(1e6, rent_usd_per_hour=100.0, energy_usd_per_hour=100.0) is None
    # 1,000,000 / (1,100 − 100) = 1,000 h exactly
    assert busy_hours_to_break_even(1e6, rent_usd_per_hour=1_100.0, energy_usd_per_hour=100.0) == 1_000.0
    rb = rent_or_buy(load_catalog(), _cost(capex_usd=4e9), nic_speed_gbps=400, train_days=30)  # type: ignore[arg-type]
    assert rb is not None and rb.break_even.months is None  # B > the life: owning never wins
    assert HOURS_PER_MONTH == 730.0


def test_a_thinner_network_is_flagged_and_chosen_only_without_another_offer():
    # 8 rails of 800 Gb/s per 8 GPUs = 800 Gb/s per GPU; every H100 offer has 8 × 400 / 8 = 400 per GPU
    rb = rent_or_buy(load_catalog(), _cost(), nic_speed_gbps=800, train_days=30)  # type: ignore[arg-type]
    assert rb is not None and not any(q.network_matches for q in rb.quotes)
    assert rb.best.offer_id == "lambda-h100-on-demand"
    assert any("thinner" in f for f in rb.flags())
    # 4 rails of 400 per 8 GPUs (200 per GPU): every offer matches
    rb4 = rent_or_buy(load_catalog(), _cost(rails_per_node=4), nic_speed_gbps=400, train_days=30)  # type: ignore[arg-type]
    assert rb4 is not None and all(q.network_matches for q in rb4.quotes)


def test_a_block_larger_than_a_provider_rents_is_flagged():
    # 2,048 GPUs: above AWS's 64 instances (512 GPUs) per Capacity Block [L1] and the 1,536 default [L9]
    rb = rent_or_buy(load_catalog(), _cost(job_nodes=256, gpus=2048), nic_speed_gbps=400, train_days=30)  # type: ignore[arg-type]
    assert rb is not None
    assert all(q.too_large for q in rb.quotes)
    flags = rb.flags()
    assert any("2,048 GPUs exceed the 512" in f and "64 instances" in f for f in flags)
    assert any("2,048 GPUs exceed the 1,536" in f for f in flags)
    assert DEFAULT_MAX_GPUS == 1_536


def test_no_committed_offer_is_flagged():
    # GB200 NVL72: on-demand offers only in the shipped catalog
    rb = rent_or_buy(load_catalog(), _cost(platform="gb200-nvl72", job_nodes=8, rails_per_node=4, gpus=576),  # type: ignore[arg-type]
                     nic_speed_gbps=400, train_days=30)
    assert rb is not None and not rb.break_even.against_committed
    assert any("no committed" in f for f in rb.flags())


def test_no_offer_for_a_gpu_without_rentals():
    # the shipped catalog rents no A100: dgx-a100 designs carry no comparison
    assert rent_or_buy(load_catalog(), _cost(platform="dgx-a100"), nic_speed_gbps=200, train_days=30) is None  # type: ignore[arg-type]


def test_a_rental_naming_an_unknown_platform_is_a_located_error(tmp_path):
    layer = tmp_path / "rent.yaml"
    layer.write_text("name: r\nrentals:\n  - id: x\n    provider: P\n    offer: O\n    platform: hgx-h1000\n"
                     "    rails_per_node: 8\n    nic_speed_gbps: 400\n    usd_per_gpu_hour: 2\n    term: on-demand\n"
                     "    price_source: quote\n    price_date: '2026-01'\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_catalog([ROOT / "catalogs" / "default.yaml", layer])
    assert f"{layer}:6:" in str(exc.value) and "hgx-h100" in str(exc.value)  # did-you-mean lists the known ids


def test_a_quote_overrides_an_offer_price_by_id(tmp_path):
    layer = tmp_path / "quote.yaml"
    layer.write_text("name: q\nrentals:\n  - id: lambda-h100-on-demand\n    usd_per_gpu_hour: 2.10\n"
                     "    price_source: Lambda quote 7\n    price_date: '2026-11'\n", encoding="utf-8")
    cat = load_catalog([ROOT / "catalogs" / "default.yaml", layer])
    offer = {r.id: r for r in cat.rentals}["lambda-h100-on-demand"]
    assert offer.usd_per_gpu_hour == 2.10 and offer.provider == "Lambda" and not offer.price_is_estimate


@pytest.fixture(scope="module")
def example():
    ls = solver.load_scenario(EXAMPLE)
    cat = api.catalog_for(ls)
    return ls, cat, solver.solve(ls, cat, top_k=3)


def test_rent_or_buy_solves_the_tco_designs_and_ranks_owning_and_renting(example):
    ls, cat, result = example
    data = read_yaml(EXAMPLE).data  # the solver's reader: `train_tokens: 2.0e12` is a number, as on the command line
    data["objective"] = "tco"
    tco = solver.solve(solver.load_scenario(data), cat, top_k=3)
    # objective rent_or_buy keeps the TCO optimiser's designs (the MILP is the tco one)
    assert [(d.label, round(d.cost.tco_usd, 2)) for d in result.designs] == \
        [(d.label, round(d.cost.tco_usd, 2)) for d in tco.designs]
    data = result.to_dict()
    options = data["rent_or_buy"]
    assert len(options) == 2 * len(result.designs)  # each design owned and rented (every design's GPU and domain has an offer)
    costs = [o["cost_usd"] for o in options]
    assert costs == sorted(costs) and [o["rank"] for o in options] == list(range(1, len(options) + 1))
    for design, d in zip(result.designs, data["designs"], strict=True):
        rb = d["rent_or_buy"]
        best = rb["quotes"][0]
        # rent = GPUs · $/GPU-h · hours, hours = the design's training days · 24 (no commitment on these offers)
        assert best["hours"] == pytest.approx(d["train_days"] * 24)
        assert rb["rent_usd"] == pytest.approx(best["gpus"] * best["usd_per_gpu_hour"] * d["train_days"] * 24)
        # GPUs rented = the job's GPUs tp·cp·pp·dp in whole NVLink domains (GB200: 512 GPUs in 8 racks of 64 used
        # = 8 · 72 = 576; HGX: domains of 8 = nodes); the hot spares bought by default (in d["gpus"]) are not rented
        lay, domain = design.layout, cat.by_id("platforms")[design.cost.platform].gpus_per_domain
        domains = lay.tp * lay.cp * lay.pp * lay.dp // lay.gpus_per_domain_used
        assert best["gpus"] == domains * domain <= d["gpus"]
        # own = the run's share of a 5-year life (defaults, inputs/ownership_schema.py) + the energy of its hours
        c, it, fac, h = d["capex_usd"], d["power_kw"]["it"], d["power_kw"]["facility"], best["hours"]
        fixed = 0.9 * c + 0.08 * 1.1 * c / 2 * 5 + 184.06 * it * 60 + 0.04 * c * 5 + 400 * d["gpus"] * 5
        assert rb["own_usd"] == pytest.approx(fixed * h / 43_800 + fac * 0.08 * h)
        # owning the run's share is cheaper than renting its hours on every design of this example
        assert rb["cheaper"] == "buy"
    assert [o["choice"] for o in options[:len(result.designs)]] == ["buy"] * len(result.designs)


def test_rent_or_buy_example_on_a_terminal_at_80_and_120_columns(tmp_path):
    for columns in (80, 120):
        screen = run_in_pty(["solve", EXAMPLE, "--json", "r.json", "--no-xlsx"], columns, tmp_path)
        data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
        lines = screen.splitlines()
        assert all(len(line) <= columns for line in lines if line[:1] in "│┃┏┡└")
        assert not any("…" in line for line in lines if line[:1] in "│┃┏┡└")
        for d in data["designs"]:
            rb = d["rent_or_buy"]
            assert f"${rb['rent_usd']:,.0f}" in screen and f"${rb['own_usd']:,.0f}" in screen
            be = rb["break_even"]
            assert f"{be['months']} mo, {be['utilisation']:.0%}" in screen
            # one break-even line names every design's months with its ranks (designs sharing them are grouped)
            assert f"≥ {be['months']} months of its 60 (≥ {be['utilisation']:.0%} of the time)" in " ".join(screen.split())
        rent_at = next(i for i, line in enumerate(lines) if line.startswith("rent or buy:"))
        head = [line for line in lines[rent_at:rent_at + 12] if line.startswith("┃")]
        cells = ["".join(c.strip() for c in column if c.strip()) for column in
                 zip(*[[c for c in h.split("┃")[1:-1]] for h in head], strict=True)]
        # the comparison's inputs stay at 80 columns (headers may be stacked: "$/" over "GPU-h")
        assert {"GPU-hours", "$/GPU-h", "rent"} <= set(cells) and any("runshare" in c.replace(" ", "") for c in cells), cells
        assert not any("TCO" in c for c in cells)  # own (the run's share) and TCO no longer side by side
        assert "owning includes:" in screen and "owning leaves out:" in screen
        assert "owning and renting, cheapest first" in screen


def test_json_of_a_plain_solve_carries_rent_or_buy_per_design(tmp_path):
    proc = run(["solve", EXAMPLE, "--json", "r.json", "--no-xlsx", "--top", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    d = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["designs"][0]
    assert {"horizon", "hours", "rent_usd", "own_usd", "tco_usd", "owning", "break_even", "break_even_month", "cheaper",
            "flags", "quotes"} <= set(d["rent_or_buy"])
    owning = d["rent_or_buy"]["owning"]
    assert set(owning["run_usd"]) == {"depreciation", "financing", "colocation", "support", "staff", "energy"}
    assert owning["includes"] and owning["leaves_out"] and set(owning["sources"]) >= {"depreciation_years"}


def test_docs_hand_calculation_reproduces_the_terminal(example):
    """docs/rent-or-buy.md works design #1 by hand; the same arithmetic here, from the doc's inputs and the
    catalog's offer prices, equals the terminal's figures to the dollar."""
    doc = (ROOT / "docs" / "rent-or-buy.md").read_text(encoding="utf-8")
    _, cat, result = example
    d = result.designs[0]
    # the doc's inputs (design #1): capex, IT kW, owned and rented GPUs; the run's hours come from the design
    capex, it_kw, owned, rented = 26_200_545.0, 1010.958, 536, 512
    assert (d.cost.capex_usd, round(d.cost.it_power_kw, 3), d.cost.gpus, d.rent.best.gpus) == (capex, it_kw, owned, rented), \
        "docs/rent-or-buy.md is stale: design #1 changed; update its hand calculation"
    hours = d.train_days * 24
    assert round(hours, 4) == 494.3982  # issue 41n: 494.6957 before; issue 41p: 542.9083 (docs/rent-or-buy.md)
    offers = {r.id: r.usd_per_gpu_hour for r in cat.rentals}
    fac = it_kw * 1.25
    life = [capex * 0.9, 0.08 * capex * 1.1 / 2 * 5, 184.06 * it_kw * 12 * 5, 0.04 * capex * 5, 400 * owned * 5]
    run = [x * hours / 43_800 for x in life] + [fac * 0.08 * hours]
    own = sum(run)
    rent = rented * offers["spheron-b200-on-demand"] * hours
    busy = sum(life) / (rented * offers["hyperstack-b200-reserved"] - fac * 0.08)
    months, share = math.ceil(busy / 730), busy / 43_800
    assert (round(own), round(rent), months, round(share * 100)) == (578_483, 1_526_385, 26, 43)
    console = Console(width=400, record=True, force_terminal=False)
    print_rent([d], console)
    screen = console.export_text()
    parts = ["depreciation", "financing", "colocation", "support", "staff", "energy"]
    line = " + ".join(f"{p} ${v:,.0f}" for p, v in zip(parts, run, strict=True)) + f" = ${own:,.0f}"
    assert line in screen
    assert f"${rent:,.0f}" in screen and f"{months} mo, {share:.0%}" in screen
    assert f"if the cluster is busy: #1 ≥ {months} months of its 60 (≥ {share:.0%} of the time)" in screen
    for figure in (f"${own:,.0f}", f"${rent:,.0f}", f"{months} months of its 60", *(f"**{v:,.0f}**" for v in run)):
        assert figure in doc, figure
