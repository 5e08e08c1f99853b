"""A user's own constraints (issue 39 item 5, optimize/user_rows.py, inputs/user_row_schema.py) and the MILP's
families as blocks that own their rows.

Hand-solvable instances on the round-priced catalog of tests/builders.py (the arithmetic is in the comments), and the
real catalog's small h100 space of tests/optimize/test_optimizer.py checked against the exhaustive enumeration of the
same space filtered by the same rows, evaluated on each enumerated design.
"""
from __future__ import annotations

import copy
import os
import subprocess
import sys

import pyomo.environ as pyo
import pytest
from builders import make_scenario
from conftest import GPT3_1_3B, REPO, enumerated_designs
from test_constraint_families import CATALOG, ONE_RAIL, TWO_RAILS, shape

import solver
from solver.api import solve
from solver.design_space import DesignSpace
from solver.errors import InputError
from solver.inputs.user_row_schema import LinearRow, Term, parse_row
from solver.optimize import oracle
from solver.optimize.data import model_data
from solver.optimize.highs import HighsAdapter
from solver.optimize.model import build_model, decode
from solver.optimize.user_rows import architectures, user_constraints

# ------------------------------------------------------------------------------------------------ the grammar


def test_rows_parse_to_their_linear_form():
    assert parse_row("nodes[h200-hgx] <= 64") == LinearRow((Term(1.0, "nodes", "platform", "h200-hgx"),), "<=", 64.0)
    # every quantity moves left, every number right: −nodes + 3 ≥ 2·gpus − 1  ⇔  −nodes − 2·gpus ≥ −4
    assert parse_row("- nodes + 3 >= 2*gpus - 1") == LinearRow(
        (Term(-1.0, "nodes"), Term(-2.0, "gpus")), ">=", -4.0)
    assert parse_row("chosen[fabric=rail-only] == 0").terms == (Term(1.0, "chosen", "fabric", "rail-only"),)
    assert parse_row("1_000 >= racks + 0.5 * switches[rails_per_node=8]").rhs == -1000.0


@pytest.mark.parametrize("text, says", [
    ("nodes * gpus <= 3", "unexpected '*'"),             # not linear
    ("nodes / 2 <= 1", "cannot read"),                   # no division
    ("__import__('os') <= 1", "cannot read"),            # nothing is evaluated
    ("nodes <= 3 <= 4", "exactly one of"),
    ("3 <= 4", "at least one quantity"),
    ("watts <= 4", "unknown quantity 'watts'"),
    ("nodes[gpu=h100] <= 4", "unknown selector field 'gpu'"),
    ("nodes[rails_per_node=x] <= 4", "whole number"),
    ("2 nodes <= 1", "unexpected 'nodes'"),
    ("nodes <= 1e400", "too large"),                     # float('1e400') is inf: no row
    ("1e308 + 1e308 >= nodes", "too large"),             # a finite sum of numbers that is not
    ("nodes[nic=cx7-ndr, switch=qm9700] <= 3", "names one field"),
])
def test_rows_outside_the_grammar_are_refused(text, says):
    with pytest.raises(ValueError, match=says):
        parse_row(text)


# ------------------------------------------------------------------------------------------------ hand-solvable


def _solve(rows: list[str], archs, shapes, functions=()):
    sc = make_scenario(target={"step_time_s": 5.0}, constraints={"user": [{"expr": r} for r in rows]} if rows else {})
    space = DesignSpace(sc, CATALOG, 5.0, archs, shapes, combinations=0, pruned={})
    with user_constraints(*functions):
        model = build_model(model_data(space))
    outcome = HighsAdapter().solve(model)
    return model, outcome


BOTH = [shape(ONE_RAIL, [1, 2, 4, 8], comp0=12), shape(TWO_RAILS, [1, 2, 4, 8], comp0=12)]


def test_a_row_that_forbids_the_cheapest_architecture_moves_the_answer_to_the_next():
    # d·T = 12 on both (T = 12/d): 5 s needs d ≥ 2.4 → d = 4, 4 nodes, one 1-tier switch.
    # one rail:  4 nodes $1,200,000 + 4 NICs $6,000 + switch $30,000 + 4 cables $200 + 2 switch-end modules $2,000
    #            + 4 NIC-end modules $2,400 + compute rack $5,000 + network rack $5,000 = $1,250,600 (the optimum)
    # two rails: 8 NICs $12,000, 8 cables $400, ⌈8/2⌉ = 4 switch-end modules $4,000, 8 NIC-end modules $4,800:
    #            $1,200,000 + 12,000 + 30,000 + 400 + 4,000 + 4,800 + 5,000 + 5,000 = $1,261,200
    model, outcome = _solve([], [ONE_RAIL, TWO_RAILS], BOTH)
    assert (decode(model).arch_index, decode(model).capex_usd) == (0, pytest.approx(1_250_600))
    model, outcome = _solve(["chosen[rails_per_node=1] == 0"], [ONE_RAIL, TWO_RAILS], BOTH)
    assert outcome.status == "optimal"
    choice = decode(model)
    assert (choice.arch_index, choice.d, choice.capex_usd) == (1, 4, pytest.approx(1_261_200))
    assert len(model.user.scenario_rows) == 1


def test_a_lower_bound_row_buys_a_bigger_cluster_and_an_impossible_one_has_no_design():
    # nodes ≥ 8 → d = 8 of {1, 2, 4, 8}: 8 nodes $2,400,000 + 8 NICs $12,000 + switch $30,000 + 8 cables $400 +
    # 4 switch-end modules $4,000 + 8 NIC-end modules $4,800 + 2 compute racks (4 nodes each) $10,000 + network rack
    # $5,000 = $2,466,200
    model, outcome = _solve(["nodes[hgx-t] >= 5"], [ONE_RAIL], BOTH[:1])
    assert (decode(model).d, decode(model).capex_usd) == (8, pytest.approx(2_466_200))
    # nodes ≤ 3 leaves d ≤ 2 (T ≥ 6 s > 5 s): no design
    _, outcome = _solve(["nodes <= 3"], [ONE_RAIL], BOTH[:1])
    assert outcome.status == "infeasible"
    # a selector that matches no architecture makes a constant row: 0 ≥ 1 is false, so no design
    _, outcome = _solve(["nodes[no-such-platform] >= 1"], [ONE_RAIL], BOTH[:1])
    assert outcome.status == "infeasible"


def test_a_python_row_equals_the_same_scenario_row():
    def two_rails_only(m):
        return sum(m.x[a] for a in architectures(m, rails_per_node=1)) <= 0

    model, _ = _solve([], [ONE_RAIL, TWO_RAILS], BOTH, functions=[two_rails_only])
    assert (decode(model).arch_index, decode(model).capex_usd) == (1, pytest.approx(1_261_200))
    assert [c.local_name for c in model.user.component_objects(pyo.Constraint)] == ["user_0"]


def test_a_python_row_over_a_mistyped_id_is_an_error_not_a_row_that_holds():
    # before: architectures(m, platform="hgx-tt") matched nothing, so Σ x ≤ 0 held trivially and the row did nothing
    def typo(m):
        return sum(m.x[a] for a in architectures(m, platform="hgx-tt")) <= 0

    with pytest.raises(ValueError, match=r"no platform with that id in the catalog \(nearest: hgx-t"):
        _solve([], [ONE_RAIL, TWO_RAILS], BOTH, functions=[typo])


# ------------------------------------------------------------------------------------------------ against the oracle

H100 = dict(name="exact-h100", workload=dict(model=GPT3_1_3B, global_batch_size=512), target=dict(step_time_s=2.0),
            constraints=dict(platforms=["hgx-h100", "dgx-h100"], nic_configurations="any", rails_per_node=[1, 8]),
            parallelism=dict(tp=[1, 2], cp=1, pp=[1, 2], vp=1, microbatch_size=[1, 2]))

# each row, and the same row evaluated on an enumerated design
ROWS = {
    "gpus[platform=hgx-h100] <= 16": lambda d: not (d.architecture.platform == "hgx-h100" and d.cost.gpus > 16),
    "chosen[nic=bf3-400gbe] == 0": lambda d: d.architecture.nic != "bf3-400gbe",
    "nodes >= 5": lambda d: d.cost.nodes >= 5,
}


@pytest.mark.parametrize("expr", sorted(ROWS))
def test_k_best_with_a_row_equals_the_enumeration_filtered_by_it(expr, default_catalog):
    """K = 3 distinct designs: every re-solve after a no-good cut keeps the row (the enumeration's unconstrained best
    is hgx-h100 · 1×bf3-400gbe at 3 nodes, 24 GPUs: each row excludes it)."""
    unconstrained = enumerated_designs(solver.load_scenario(copy.deepcopy(H100)).scenario, default_catalog)
    assert not ROWS[expr](unconstrained[0])
    doc = copy.deepcopy(H100)
    doc["constraints"]["user"] = [{"expr": expr}]
    result = solve(solver.load_scenario(doc), default_catalog, top_k=3)
    want = oracle.best_distinct([d for d in unconstrained if ROWS[expr](d)], 3)
    assert result.status == "optimal"
    assert [(d.label, round(d.objective_usd, 2), d.layout) for d in result.designs] == \
        [(d.label, round(d.objective_usd, 2), d.layout) for d in want]


def test_solve_takes_python_rows_and_drops_them_after(default_catalog):
    def no_bluefield(m):
        return sum(m.x[a] for a in architectures(m, nic="bf3-400gbe")) == 0

    ls = solver.load_scenario(copy.deepcopy(H100))
    unconstrained = enumerated_designs(ls.scenario, default_catalog)
    want = oracle.best_distinct([d for d in unconstrained if d.architecture.nic != "bf3-400gbe"], 2)
    got = solve(ls, default_catalog, top_k=2, constraints=[no_bluefield]).designs
    assert [(d.label, round(d.objective_usd, 2)) for d in got] == [(d.label, round(d.objective_usd, 2)) for d in want]
    again = solve(ls, default_catalog, top_k=1).designs[0]  # the rows applied inside that call only
    assert again.architecture.nic == "bf3-400gbe"


# ------------------------------------------------------------------------------------------------ bad input


def _cli(tmp_path, text: str, command: str = "solve"):
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "solver", command, str(path), "--json", str(tmp_path / "o.json"),
                           "--no-xlsx"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


SCENARIO = """name: rows
workload:
  model: {layers: 24, hidden_size: 2048, ffn_hidden_size: 8192, attention_heads: 16, vocab_size: 51200, seq_len: 2048}
  global_batch_size: 512
target: {step_time_s: 2.0}
constraints:
  platforms: [hgx-h100]
  user:
    - expr: "nodes <= 64"
    - expr: "{expr}"
"""


def test_a_row_outside_the_grammar_is_a_located_input_error(tmp_path):
    out = _cli(tmp_path, SCENARIO.replace("{expr}", "nodes * gpus <= 3"))
    assert out.returncode == 2, out.stderr
    assert "s.yaml:10:" in out.stderr and "constraints.user[1].expr" in out.stderr and "unexpected '*'" in out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "o.json").exists()


def test_a_selector_naming_no_catalog_part_is_a_located_input_error(tmp_path):
    out = _cli(tmp_path, SCENARIO.replace("{expr}", "nodes[hgx-h1000] <= 3"))
    assert out.returncode == 2, out.stderr
    assert "s.yaml:10:" in out.stderr and "no platform 'hgx-h1000'" in out.stderr
    assert not (tmp_path / "o.json").exists()


def test_validate_checks_a_row_selector_against_the_catalog_as_solve_does(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.replace("{expr}", "nodes[hgx-h1000] <= 3"), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "solver", "validate", str(path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path, timeout=300)
    assert out.returncode == 2, out.stderr
    assert "s.yaml:10:" in out.stderr and "no platform 'hgx-h1000'" in out.stderr  # the typo, located
    assert "did you mean 'hgx-h100'" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("with_site", [False, True])
@pytest.mark.parametrize("command", ["solve", "validate"])
def test_the_serving_cli_refuses_rows_it_would_not_apply(tmp_path, command, with_site):
    """Before: `fabricplan solve` of a serving scenario (the CLI does not pass through api.solve) ignored the rows
    and exited 0; `validate` called the file valid."""
    name = "serve-site-h100-or-l40s.yaml" if with_site else "serve-llama3-8b-pcie.yaml"
    text = (REPO / "scenarios" / name).read_text(encoding="utf-8")
    assert "\nconstraints:\n" in text
    path = tmp_path / "s.yaml"
    path.write_text(text.replace("\nconstraints:\n", '\nconstraints:\n  user: [{expr: "nodes <= 4"}]\n', 1),
                    encoding="utf-8")
    extra = ["--json", str(tmp_path / "o.json"), "--no-xlsx"] if command == "solve" else []
    out = subprocess.run([sys.executable, "-m", "solver", command, str(path), *extra], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path, timeout=300)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "constraints.user" in out.stderr and "training MILP only" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "o.json").exists()


def test_the_plan_refuses_rows_it_would_not_apply(default_catalog):
    doc = solver.load_scenario(REPO / "scenarios" / "plan-5-years.yaml")
    with pytest.raises(InputError, match="training MILP only"), user_constraints(lambda m: None):
        solver.api.plan(doc, default_catalog, compare=False)


# ------------------------------------------------------------------------------------------------ the blocks

FAMILY_BLOCKS = ["choice", "step", "capacity", "memory", "sizing", "tiers", "fabric", "cabling", "racks", "netting",
                 "caps", "pins", "user", "cuts"]


def test_every_row_lives_in_its_family_block_in_family_order():
    model, _ = _solve([], [ONE_RAIL, TWO_RAILS], BOTH)
    assert list(model.component_map(pyo.Constraint)) == []  # nothing on the model itself
    assert [b.local_name for b in model.component_objects(pyo.Block, descend_into=False)] == FAMILY_BLOCKS
    owner = {c.local_name: c.parent_block().local_name for c in model.component_objects(pyo.Constraint)}
    assert owner["one_design"] == "choice" and owner["step_time"] == "step" and owner["exposure"] == "step"
    assert owner["memory_fit"] == "memory" and owner["fewest_tiers"] == "tiers" and owner["link_modules"] == "cabling"
    assert owner["one_tier_ports"] == "fabric" and owner["network_racks_power"] == "racks"
    assert hasattr(model.fabric, "leaves2") and not hasattr(model, "leaves2")  # the family's variables are its block's
