"""The length of a year is defined once (issue 47s): solver/units.py, 365 days = 8,760 h = 31,536,000 s, the year of
the hand calculations in docs/model.md (TCO = capex + years · 8,760 h · facility kW · $/kWh) and docs/rent-or-buy.md
(life L = depreciation_years · 8,760 h; a month of 730 h). Before, the sweep's TCO per million tokens counted 365.25
days and the price age 365.25 / 12-day months while every other figure counted 365 days."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from solver.units import (
    DAYS_PER_MONTH,
    DAYS_PER_YEAR,
    HOURS_PER_MONTH,
    HOURS_PER_YEAR,
    SECONDS_PER_DAY,
    SECONDS_PER_YEAR,
)

ROOT = Path(__file__).resolve().parent.parent
# numbers that spell a year (or its month) in days, hours or seconds: 365, 365.25, 366 days; 8,760 / 8,766 h;
# 31,536,000 / 31,557,600 s; 730 / 730.5 h and 30.4375 / 30.4167 days a month
YEAR_SPELLINGS = (365, 365.25, 366, 8760, 8766, 31_536_000, 31_557_600, 730, 730.5, 30.4375, 365 / 12)
# (module, value): a number that only looks like a year
NOT_A_YEAR = {("solver/reports/xlsx.py", 365)}  # the width of "/" in the bold font's width table (1/1000 em)


def test_the_year_is_365_days_as_the_docs_hand_calculations():
    assert DAYS_PER_YEAR == 365
    assert HOURS_PER_YEAR == 8_760  # docs/model.md: TCO = capex + years · 8,760 h · facility kW · $/kWh
    assert SECONDS_PER_YEAR == 31_536_000  # 8,760 · 3,600
    assert HOURS_PER_MONTH == 730  # docs/rent-or-buy.md: rent = G · $/GPU-h · max(h, commitment months · 730)
    assert DAYS_PER_MONTH == pytest.approx(30.41667, abs=1e-5)


def spelled_outside_units(spellings: tuple[float, ...], exempt: set[tuple[str, float]]) -> list[str]:
    """'module:line: value' of every number literal in solver/ (but units.py) equal to one of `spellings`."""
    found = []
    for path in sorted((ROOT / "solver").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "solver/units.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Constant) and type(node.value) in (int, float)
                    and any(node.value == pytest.approx(v, abs=1e-3) for v in spellings)
                    and (rel, node.value) not in exempt):
                found.append(f"{rel}:{node.lineno}: {node.value}")
    return found


def test_no_module_but_units_spells_the_year_itself():
    found = spelled_outside_units(YEAR_SPELLINGS, NOT_A_YEAR)
    assert not found, "import the year from solver/units.py: " + ", ".join(found)


def test_the_day_is_86400_seconds_and_only_units_spells_it():
    """24 h · 3,600 s = 86,400 s, defined once (issue clean): a training day (results.py, scenario_schema.py,
    diagnose.py), a serving day's tokens (serving_schema.py) and a year of served tokens (serving_results.py)."""
    assert SECONDS_PER_DAY == 24 * 3600
    assert SECONDS_PER_YEAR == DAYS_PER_YEAR * SECONDS_PER_DAY
    found = spelled_outside_units((86_400,), set())
    assert not found, "import SECONDS_PER_DAY from solver/units.py: " + ", ".join(found)


def test_the_sweeps_cost_per_million_tokens_counts_the_same_year_as_the_designs():
    """A sweep row's TCO per million tokens and a design's cost per million tokens (results.py) over one year of
    training at goodput 1, TCO = capex: the same number. By hand: 1e6 tokens/s (B·s = 8e6 tokens per 8 s step) over
    1 year = 1e6 · 31,536,000 = 3.1536e13 tokens = 3.1536e7 million; $3.1536e7 / 3.1536e7 = $1.00 per million."""
    from solver.results import cost_per_million_tokens_usd
    from solver.sweep.summary import point_summary

    design = {"architecture": "A", "platform": "p", "gpus": 1000, "nodes": 125, "racks": 10, "step_time_s": 8.0,
              "target_step_time_s": 9.0, "mfu": 0.4, "capex_usd": 20e6, "tco_usd": 31_536_000.0,
              "flops_per_step": {"model": 1e18}, "fabric": {"family": "fat-tree", "leaf_switches": 8, "spine_switches": 4, "core_switches": 0}}
    scenario = {"workload": {"global_batch_size": 1000, "model": {"seq_len": 8000}}, "tco": {"years": 1.0}}
    sweep_row = point_summary(design, scenario)["tco_usd_per_million_tokens"]
    assert sweep_row == pytest.approx(1.0, rel=1e-12)
    assert cost_per_million_tokens_usd(31_536_000.0, 8_000_000, 8.0, 1.0, 1.0) == pytest.approx(1.0, rel=1e-12)
