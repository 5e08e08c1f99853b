"""A fabric family owns its words (issue 39 item 4): its tiers bottom up, each tier's switch role and link name, and
the catalog link key that builds the link (`fabrics.FabricVocabulary`). The bill of materials, the JSON, the cables
sheet, the figures, the terminal and the failure model read them from the design's family.

1. A toy non-tree family, defined here and added through the public registry (`fabrics.register_family`), gets a
   bill of materials, JSON, cables sheet, switch figure and terminal line in its own words, with no module of the
   package edited for it (docs/architecture.md, "Adding a fabric family", works the same example).
2. Every shipped family's declared words are exactly the ones its sizing and its bill of materials emit.
3. Outside solver/fabrics and the catalog schema no code spells a tree word ("leaf", "node_leaf", …) or reads a
   tree role by name (`.leaf_switches`): read with `ast`.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import GPT3_1_3B

import solver
from solver.costing import design_cost
from solver.fabrics import (
    FAMILIES,
    FabricConstants,
    FabricSize,
    FabricSpec,
    FabricTier,
    FabricVocabulary,
    family_vocabulary,
    register_family,
    tier_counts,
)
from solver.failures import job_parts
from solver.figures import figure
from solver.reports.cables_sheet import cable_rows
from solver.reports.terminal import fabric_text

PACKAGE = Path(__file__).resolve().parents[2] / "solver"
TREE_WORDS = {"leaf", "spine", "core", "node_leaf", "leaf_spine", "spine_core"}

# ------------------------------------------------------------------------------------ a toy 2-D torus


@dataclass(frozen=True)
class Torus2D:
    """A toy 2-D torus of routers: each router gives 4 ports to its ring neighbours (±x, ±y) and the other k − 4 to
    node NICs ("terminal" links); routers R = ⌈E / (k − 4)⌉ for E = nodes · rails endpoints, ring links = 4R / 2 = 2R.
    The ring's wrap-around runs are long, so the family builds them from the catalog's longest length class
    (`spine_core`). Evaluator only: no rows in the optimisation model."""

    name: str = "torus-2d"
    milp_block: str = "torus-2d"
    min_tiers: int = 2
    max_tiers: int = 2
    planes_by_domain_position: bool = False
    vocabulary: FabricVocabulary = FabricVocabulary((FabricTier("router", "terminal", "node_leaf"),
                                                     FabricTier(None, "torus_ring", "spine_core")))

    def max_nodes(self, spec: FabricSpec, tiers: int) -> int:
        return (spec.radix - 4) * spec.radix // spec.rails_per_node if tiers == 2 else 0  # at most k routers

    def size(self, nodes: int, spec: FabricSpec, tiers: int | None = None) -> FabricSize | None:
        if tiers not in (None, 2) or nodes > self.max_nodes(spec, 2):
            return None
        endpoints = nodes * spec.rails_per_node
        routers = math.ceil(endpoints / (spec.radix - 4))
        return FabricSize(self.name, 2, spec.radix, spec.radix - 4, 4, 1.0, {"router": routers},
                          {"terminal": endpoints, "torus_ring": 2 * routers}, endpoints)

    def constants(self, spec: FabricSpec) -> FabricConstants:
        raise NotImplementedError("the toy torus has no optimisation rows")

    def planes(self, spec: FabricSpec) -> int:
        return 1

    def pod_nodes(self, spec: FabricSpec) -> int:
        return 0

    def twin(self, spec: FabricSpec) -> str | None:
        return None

    def add_milp(self, m: Any, archs: list[int]) -> None:
        raise NotImplementedError

    def milp_switches(self, m: Any, a: int) -> dict[str, Any]:
        raise NotImplementedError

    def milp_links(self, m: Any, a: int) -> dict[str, Any]:
        raise NotImplementedError


@pytest.fixture
def torus():
    fam = register_family(Torus2D())
    try:
        yield fam
    finally:
        FAMILIES.pop(fam.name)


def _scenario():
    # hot spares off and the compute fabric only: the counts below are the fabric's alone
    doc = dict(name="torus", capex_scope="compute_fabric_only", reliability={"spares": False},
               workload=dict(model=GPT3_1_3B, global_batch_size=512),
               target=dict(step_time_s=2.0))
    return solver.load_scenario(doc).scenario


def _fabric_lines(cost) -> dict[str, tuple[int, float]]:
    return {line.role: (line.quantity, line.extended_usd) for line in cost.bom if line.category in ("switch", "link")}


def test_a_toy_torus_gets_a_bill_of_materials_in_its_own_words(torus, default_catalog):
    """30 DGX H100 × 8 rails = E = 240 endpoints on 64-port QM9700 routers: R = ⌈240 / 60⌉ = 4 routers, 8 ring links.
    Terminal links at the facility's node_leaf distance (10 m): the 50 m SR option (the 3 m DAC does not reach),
    $100 cable, twin-port $1,100 module at the switch (2 links) and, the DGX's cages being twin-port, the same at the
    node: 120 + 120 modules. Ring links at the spine_core distance (60 m): the 100 m DR option, $150 cable, $1,300
    twin-port modules at both ends: 4 + 4 (catalogs/default.yaml, ndr-* links)."""
    cost = design_cost(_scenario(), default_catalog, "dgx-h100", "cx7-ndr", 8, "qm9700", 1.0, 30,
                       fabric_family="torus-2d")
    assert cost is not None and cost.fabric.family == "torus-2d"
    lines = _fabric_lines(cost)
    assert lines == {
        "router switch": (4, 4 * 50_000.0),
        "terminal cable": (240, 240 * 100.0),
        "terminal switch-end module": (120, 120 * 1_100.0),
        "terminal far-end module": (120, 120 * 1_100.0),
        "torus_ring cable": (8, 8 * 150.0),
        "torus_ring switch-end module": (4, 4 * 1_300.0),
        "torus_ring far-end module": (4, 4 * 1_300.0),
    }
    assert sum(usd for _, usd in lines.values()) == pytest.approx(499_600.0)
    # the words the code writes (a line's role and its description up to the catalog's own text) are the torus's
    said = " ".join(f"{line.role} {line.description.split(': ')[0]}" for line in cost.bom)
    assert not {"leaf", "spine", "core"} & set(said.replace("_", " ").split())

    fabric = cost.to_dict()["fabric"]
    assert fabric["router_switches"] == 4 and fabric["links"] == {"terminal": 240, "torus_ring": 8}
    assert not {"leaf_switches", "spine_switches", "core_switches"} & set(fabric)
    assert figure("switches").read({"fabric": fabric}) == 4

    rows = cable_rows(SimpleNamespace(cost=cost), default_catalog)
    assert [(r["tier"], r["link"], r["planned_m"], r["cables"], r["switch_end"], r["far_end"]) for r in rows] == [
        ("terminal", "ndr-node-leaf-sr", 10.0, 240, 120, 120), ("torus_ring", "ndr-spine-core-dr", 60.0, 8, 4, 4)]
    assert fabric_text(cost).startswith("fabric: torus-2d, 2 tier(s), 4 router ")
    assert fabric_text(cost).endswith("(64 ports in use); links 240 / 8")
    # the failure model's network parts: the job's share of the routers its nodes plug into (all 30 nodes: 4)
    assert float(job_parts("torus-2d", 240, 30, 8, cost.fabric, 30)["switch"]) == pytest.approx(4.0)


def test_the_registry_refuses_words_that_do_not_hold_the_family(torus):
    with pytest.raises(ValueError, match="distinct single words"):
        FabricVocabulary((FabricTier("router", "router", "node_leaf"),))
    with pytest.raises(ValueError, match="the first with switches"):
        FabricVocabulary((FabricTier(None, "terminal", "node_leaf"),))
    with pytest.raises(ValueError, match="already registered"):
        register_family(Torus2D())
    with pytest.raises(ValueError, match="its vocabulary names 2"):
        register_family(Torus2D(name="torus-3", max_tiers=3))


# ------------------------------------------------------------------------------------ the shipped families


@pytest.mark.parametrize("name", ["fat-tree", "multi-plane", "rail-only"])
def test_each_shipped_family_emits_the_words_it_declares(name, default_catalog):
    """8 DGX H100 × 8 rails on QM9700 in every tier count the family builds: a t-tier fabric's sizing is keyed by
    the declared roles and links, its BOM has a switch line per role and the cable of each of the first t links
    with a count (every count here is > 0: 8 nodes need ≥ 1 switch per role), and the JSON names every role."""
    words = family_vocabulary(name)
    for tiers in tier_counts(FAMILIES[name]):
        cost = design_cost(_scenario(), default_catalog, "dgx-h100", "cx7-ndr", 8, "qm9700", 1.0, 8,
                           tiers=tiers, fabric_family=name)
        assert cost is not None and cost.fabric.tiers == tiers
        assert tuple(cost.fabric.switches) == words.switch_roles and tuple(cost.fabric.links) == words.link_names
        roles = {line.role for line in cost.bom if line.category in ("switch", "link")}
        used = words.tiers[:tiers]
        assert roles == {f"{t.role} switch" for t in used if t.role} | {f"{t.link} cable" for t in used} | {
            line.role for line in cost.bom if line.category == "link" and "module" in line.role}
        assert {r.split()[0] for r in roles if r.endswith("module")} <= {t.link for t in used}
        assert {f"{role}_switches" for role in words.switch_roles} <= set(cost.to_dict()["fabric"])
        assert [r["tier"] for r in cable_rows(SimpleNamespace(cost=cost), default_catalog)] == [t.link for t in used]


# ------------------------------------------------------------------------------------ no tree words outside

ALLOWED = {"fabrics", "inputs"}  # the families' own modules; the catalog schema (its link keys are the catalog's)


def _tree_words(tree: ast.AST) -> list[int]:
    """Lines with a string constant that is a tree word, or an attribute read of a tree role's count."""
    return sorted(node.lineno for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and node.value in TREE_WORDS
                  or isinstance(node, ast.Attribute) and node.attr in ("leaf_switches", "spine_switches", "core_switches"))


def test_no_code_outside_the_fabrics_spells_a_tree_word():
    found = {str(p.relative_to(PACKAGE)): lines for p in sorted(PACKAGE.rglob("*.py")) if not ALLOWED & set(p.parts)
             if (lines := _tree_words(ast.parse(p.read_text(encoding="utf-8"))))}
    assert not found, f"read roles and link names from the design's family (FabricSize.vocabulary): {found}"


def test_the_reader_finds_tree_words():
    assert _tree_words(ast.parse('x = f.links["node_leaf"]\ny = f.leaf_switches\nz = "a leaf"')) == [1, 2]
