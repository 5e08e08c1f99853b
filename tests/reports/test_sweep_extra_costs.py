"""The sweep workbook's capex by category holds every BOM category, the `extra` lines included (issue 26 item 6:
the categories are one vocabulary, `costing.BOM_CATEGORIES`; before, the sweep workbook left `extra` out and showed
capex and TCO too low for a scenario with `extra_costs`).

The scenario is tests/reports/test_sweep_workbook.py's (a Llama-3-8B-shaped model, 5 % spare nodes, a 10 %
contingency, max 100 GPUs) for two years (256 and 512 sequences), plus two cost rules: storage at $10,000 per node
bought (spares included) and a support contract at 8 % of the hardware lines.
"""
from __future__ import annotations

import copy

import openpyxl
import pytest
from office import needs_soffice, profile, recalc
from test_sweep_workbook import SCENARIO, label_row

import solver
from solver.api import catalog_for
from solver.costing import BOM_CATEGORIES, price_category
from solver.inputs.schema import PRICE_CATEGORIES
from solver.reports.sweep_excel import write_sweep_workbook
from solver.sweep.plan import plan_sweep
from solver.sweep.run import run_points
from solver.sweep.summary import sweep_report

STORAGE_PER_NODE_USD = 10_000.0
SUPPORT_FRACTION = 0.08
CONTINGENCY = 0.10
# the hardware lines a support fraction applies to: the compute fabric's, and since issue 24 the site hardware
# (storage fabric and management switches, the cooling plant; SPEC §5.2, costing.facility.SITE_PRICE_CATEGORY);
# installation is labour, priced like an extra line, so no support is paid on it
HARDWARE = ("compute", "spares", "nic", "switch", "link", "rack", "storage", "management", "cooling")

EXTRA = dict(copy.deepcopy(SCENARIO), name="sweep-extra",
             sweep={"parameters": [{"path": "workload.global_batch_size", "growth": {"factor": 2, "steps": 1}}]},
             extra_costs=[{"name": "storage", "per_node_usd": STORAGE_PER_NODE_USD, "price_source": "test figure",
                           "price_date": "2026-12"},
                          {"name": "support", "fraction_of_hardware": SUPPORT_FRACTION, "price_source": "test figure",
                           "price_date": "2026-12"}])


@pytest.fixture(scope="module")
def swept():
    ls = solver.load_scenario(copy.deepcopy(EXTRA))
    cat = catalog_for(ls)
    plan = plan_sweep(ls, cat)
    report = sweep_report(plan, run_points(plan))
    assert [p["status"] for p in report["points"]] == ["optimal", "optimal"]
    return report, ls, cat


@pytest.fixture(scope="module")
def book(swept, tmp_path_factory):
    report, ls, cat = swept
    return write_sweep_workbook(report, tmp_path_factory.mktemp("sweep_extra") / "sweep.xlsx", ls, cat)


def expected_extra_usd(point: dict) -> float:
    """storage: $10,000 × nodes bought; support: 8 % × the hardware lines of the point's BOM (the JSON's)."""
    hardware = sum(x["extended_usd"] for x in point["design"]["bom"] if x["category"] in HARDWARE)
    return STORAGE_PER_NODE_USD * point["nodes"] + SUPPORT_FRACTION * hardware


def test_the_categories_are_one_vocabulary():
    # issue 24's site categories (storage fabric, management networks, cooling plant, installation) sit between
    # the racks and the extra lines: one vocabulary in one order for every report
    assert BOM_CATEGORIES == ("compute", "spares", "nic", "switch", "link", "rack", "storage", "management", "cooling",
                              "installation", "extra")
    # the scenario's price factors name the same categories (spares are priced like compute)
    assert tuple(dict.fromkeys(price_category(c) for c in BOM_CATEGORIES)) == PRICE_CATEGORIES


def test_capex_by_category_holds_the_extra_lines(book, swept):
    report, _, _ = swept
    cached = openpyxl.load_workbook(book, data_only=True)["BOM by point"]
    extra_row = label_row(cached, "extra")
    for k, p in enumerate(report["points"]):
        col = 2 + k
        assert cached.cell(row=extra_row, column=col).value == pytest.approx(expected_extra_usd(p), rel=1e-12)
        # the workbook's category rows are the point's BOM categories, in BOM_CATEGORIES order, site lines included
        bought = {x["category"] for x in p["design"]["bom"] if x["category"] != "contingency"}
        assert {"storage", "management", "installation"} <= bought  # capex_scope complete (the default)
        rows = [label_row(cached, c) for c in BOM_CATEGORIES if c in bought]
        assert rows == sorted(rows) and rows[-1] == extra_row
        # capex = (hardware + extra)·(1 + 10 %) = the JSON's; TCO adds the energy
        categories = sum(x["extended_usd"] for x in p["design"]["bom"] if x["category"] != "contingency")
        assert p["capex_usd"] == pytest.approx(categories * (1 + CONTINGENCY), rel=1e-12)
        assert abs(cached.cell(row=label_row(cached, "capex (USD)"), column=col).value - p["capex_usd"]) < 0.005
        assert abs(cached.cell(row=label_row(cached, "TCO (USD)"), column=col).value - p["tco_usd"]) < 0.005


@pytest.mark.libreoffice
@needs_soffice
def test_recalculated_capex_and_tco_equal_the_json(book, swept, tmp_path_factory):
    report, _, _ = swept
    ws = recalc(book, profile(tmp_path_factory.mktemp("lo_extra")))["BOM by point"]
    for k, p in enumerate(report["points"]):
        assert abs(ws.cell(row=label_row(ws, "capex (USD)"), column=2 + k).value - p["capex_usd"]) < 0.005
        assert abs(ws.cell(row=label_row(ws, "TCO (USD)"), column=2 + k).value - p["tco_usd"]) < 0.005
