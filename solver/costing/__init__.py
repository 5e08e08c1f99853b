"""Cost, power and the bill of materials (SPEC §6): the costing package and its public face.

    table.py     THE bill-of-materials category table (`bom_lines`): prices integers, model expressions and
                 lower bounds alike; racks, parts of an architecture, `design_cost` (the evaluator), caps
    lines.py     the vocabulary every costing module reads: Parts, Quantities, Line
    owned.py     owned inventory (stock keys, bought = max(0, needed − owned), purchase, energy, TCO), idle
                 inventory, the run's share of owning (OwnershipCost)
    bom.py       the evaluator's bill of materials: BomLines with owned/bought shares, fraction and
                 contingency lines, capex, IT power
    facility.py  orderable designs: NIC configurations, uncabled on-board NICs, site lines

The names below are what the other stages use (`from solver import costing; costing.design_cost(...)`); inside
the package every module imports from the module that defines a name. Issue 39 made this a package (it was
costing.py, costing_lines.py, costing_owned.py, costing_bom.py and costing_facility.py).
"""
from __future__ import annotations

from .lines import Line, Parts, Quantities, hardware_fraction
from .owned import (
    Stock,
    energy_usd,
    lines_capex_usd,
    lines_power_kw,
    price_category,
    pue_and_usd_per_kwh,
    purchase_usd,
    stock_of,
)
from .table import (
    BOM_CATEGORIES,
    MODULE_ENDS,
    CostedDesign,
    bill_of_materials,
    bom_lines,
    caps_exceeded,
    check_combination,
    compute_units,
    cost_for_objective_usd,
    design_cost,
    fabric_spec,
    job_nodes,
    module_price,
    network_racks,
    nodes_per_unit,
    parts_for,
    point_lower_bound_usd,
    rack_of,
    site_count,
    spare_units_for,
    units_per_rack,
)

__all__ = ["BOM_CATEGORIES", "CostedDesign", "Line", "MODULE_ENDS", "Parts", "Quantities", "Stock", "bill_of_materials", "bom_lines", "caps_exceeded", "check_combination", "compute_units", "cost_for_objective_usd", "design_cost", "energy_usd", "fabric_spec", "hardware_fraction", "job_nodes", "lines_capex_usd", "lines_power_kw", "module_price", "network_racks", "nodes_per_unit", "parts_for", "point_lower_bound_usd", "price_category", "pue_and_usd_per_kwh", "purchase_usd", "rack_of", "site_count", "spare_units_for", "stock_of", "units_per_rack"]
