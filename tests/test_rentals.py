"""Rent or buy (SPEC §6.2 Rentals; solver/rentals.py): catalog offers, the rental cost of a design's
GPU-hours, owning for the same hours, the break-even month, objective rent_or_buy, the terminal.

Expected numbers are worked by hand in the comments from the shipped catalog's offers.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_cli import run
from test_planner_cli import run_in_pty

import solver
from solver import api
from solver.errors import InputError
from solver.inputs import load_catalog
from solver.inputs.yaml_safe import read_yaml
from solver.rentals import HOURS_PER_MONTH, break_even_month, rent_or_buy

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "rent-or-buy.yaml"


def _cost(**over) -> SimpleNamespace:
    """A costed H100 design as solver/rentals.py reads it: 128 job nodes of 8 GPUs, 8 rails."""
    base = dict(platform="hgx-h100", job_nodes=128, rails_per_node=8, tco_years=5.0, facility_power_kw=1500.0,
                usd_per_kwh=0.08, capex_usd=40_000_000.0, tco_usd=45_256_000.0)
    base.update(over)
    return SimpleNamespace(**base)


def test_rental_cost_own_cost_and_break_even_by_hand():
    cat = load_catalog()
    rb = rent_or_buy(cat, _cost(), nic_speed_gbps=400, train_days=30)  # type: ignore[arg-type]
    assert rb is not None and rb.horizon == "training run"
    # GPUs = 128 nodes · 8 = 1,024; hours = 30 days · 24 = 720 h
    # lambda-h100-on-demand: 1,024 · 720 · $3.49 = $2,573,107.20
    # aws-p5-capacity-block: 1,024 · 720 · $4.916 = $3,624,468.48
    # aws-p5-on-demand:      1,024 · 720 · $12.29 = $9,061,171.20
    # lambda-h100-reserved:  12-month commitment: 1,024 · 8,760 · $1.85 = $16,594,944.00 (not 720 h)
    rents = {q.offer_id: q.rent_usd for q in rb.quotes}
    assert rents == pytest.approx({"lambda-h100-on-demand": 2_573_107.20, "aws-p5-capacity-block": 3_624_468.48,
                                   "aws-p5-on-demand": 9_061_171.20, "lambda-h100-reserved": 16_594_944.00})
    assert rb.best.offer_id == "lambda-h100-on-demand"
    # own = capex + 1,500 kW · $0.08 · 720 h = 40,000,000 + 86,400
    assert rb.own_usd == pytest.approx(40_086_400.0)
    assert rb.cheaper == "rent"
    # renting a month: 1,024 · $3.49 · 730 h = $2,608,870.40; energy a month 1,500 · 0.08 · 730 = $87,600
    # 40,000,000 / (2,608,870.40 − 87,600) = 15.87 → owning is cheaper from month 16
    assert rb.energy_usd_per_month == pytest.approx(87_600.0)
    assert rb.break_even_month == 16
    assert all(q.network_matches for q in rb.quotes)  # 8 × 400 Gb/s per 8 GPUs on both sides


def test_horizon_is_the_tco_years_without_train_tokens():
    rb = rent_or_buy(load_catalog(), _cost(), nic_speed_gbps=400, train_days=None)  # type: ignore[arg-type]
    assert rb is not None and rb.horizon == "tco years"
    # 5 years · 8,760 h = 43,800 h; the reserved offer is now the cheapest: 1,024 · 43,800 · $1.85 = $82,974,720
    assert rb.hours == 43_800.0
    assert rb.best.offer_id == "lambda-h100-reserved" and rb.best.rent_usd == pytest.approx(82_974_720.0)
    # own for the TCO years is the TCO: 40,000,000 + 1,500 · 0.08 · 43,800 = 45,256,000
    assert rb.own_usd == pytest.approx(45_256_000.0) == pytest.approx(rb.tco_usd)
    assert rb.cheaper == "buy"


def test_a_thinner_network_is_flagged_and_chosen_only_without_another_offer():
    # 8 rails of 800 Gb/s per 8 GPUs = 800 Gb/s per GPU; every H100 offer has 8 × 400 / 8 = 400 per GPU
    rb = rent_or_buy(load_catalog(), _cost(), nic_speed_gbps=800, train_days=30)  # type: ignore[arg-type]
    assert rb is not None and not any(q.network_matches for q in rb.quotes)
    assert rb.best.offer_id == "lambda-h100-on-demand"
    # 4 rails of 400 per 8 GPUs (200 per GPU): every offer matches
    rb4 = rent_or_buy(load_catalog(), _cost(rails_per_node=4), nic_speed_gbps=400, train_days=30)  # type: ignore[arg-type]
    assert rb4 is not None and all(q.network_matches for q in rb4.quotes)


def test_break_even_never_when_renting_costs_no_more_than_energy():
    assert break_even_month(1e6, rent_usd_per_month=1_000.0, energy_usd_per_month=1_000.0) is None
    assert break_even_month(0.0, rent_usd_per_month=2_000.0, energy_usd_per_month=1_000.0) == 0
    # 1,000,000 / (101,000 − 1,000) = 10 exactly: month 10, not 11
    assert break_even_month(1e6, rent_usd_per_month=101_000.0, energy_usd_per_month=1_000.0) == 10
    assert HOURS_PER_MONTH == 730.0


def test_no_offer_for_a_gpu_without_rentals():
    # the shipped catalog rents no A100: dgx-a100 designs carry no comparison
    assert rent_or_buy(load_catalog(), _cost(platform="dgx-a100"), nic_speed_gbps=200, train_days=30) is None  # type: ignore[arg-type]


def test_a_rental_naming_an_unknown_platform_is_a_located_error(tmp_path):
    layer = tmp_path / "rent.yaml"
    layer.write_text("name: r\nrentals:\n  - id: x\n    provider: P\n    offer: O\n    platform: hgx-h1000\n"
                     "    nics_per_node: 8\n    nic_speed_gbps: 400\n    usd_per_gpu_hour: 2\n    term: on-demand\n"
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
        # own = capex + facility kW · $/kWh · hours
        assert rb["own_usd"] == pytest.approx(d["capex_usd"] + d["power_kw"]["facility"] * 0.08 * best["hours"])


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
            assert f"month {rb['break_even_month']}" in screen
        assert "owning and renting, cheapest first" in screen


def test_json_of_a_plain_solve_carries_rent_or_buy_per_design(tmp_path):
    proc = run(["solve", EXAMPLE, "--json", "r.json", "--no-xlsx", "--top", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    d = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["designs"][0]
    assert {"horizon", "hours", "rent_usd", "own_usd", "tco_usd", "break_even_month", "cheaper", "quotes"} <= \
        set(d["rent_or_buy"])
