"""docs/serving-fleet.md names every row family of the fleet MILP (as tests/test_docs.py does for the training
model), and the built model has exactly those constraint components."""
from __future__ import annotations

import re
from pathlib import Path

import pyomo.core as pyo

import solver
from solver.design_space.serving import build_fleet_space
from solver.optimize.serving_model import build_fleet_model
from solver.optimize.serving_solve import caps_of

from .fleet_scenarios import scenario

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "serving-fleet.md").read_text(encoding="utf-8")
SOURCE = (REPO / "solver" / "optimize" / "serving_model.py").read_text(encoding="utf-8")


def test_every_declared_row_family_is_documented():
    declared = set(re.findall(r"\b[mb]\.([a-z_0-9]+) = pyo\.Constraint(?:List)?\(", SOURCE))  # m: the model, b: a family block
    assert {"one_mode", "one_pool", "serve_peak", "ttft_p90", "tpot_p90", "kv_path", "caps"} <= declared
    missing = [name for name in declared - {"cuts"} if f"| {name}" not in DOC]
    assert not missing, f"document in docs/serving-fleet.md: {missing}"


def test_built_model_components_are_the_documented_ones():
    sc = solver.load_scenario(scenario(**{"serving.platforms_per_pool": "same",
                                          "constraints.max_gpus": 64})).scenario
    m = build_fleet_model(build_fleet_space(sc, solver.load_catalog()), caps_of(sc), "capex")
    built = {c.local_name for c in m.component_objects(pyo.Constraint, descend_into=True)}
    documented = set(re.findall(r"^\| ([a-z_0-9]+)(?:\[|\s)", DOC, flags=re.M)) | {"cuts"}
    assert built <= documented, built - documented
