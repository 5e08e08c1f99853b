"""Expert parallelism as an optimiser decision (SPEC §4.7, §7): ep is carved out of the data-parallel ranks
and chosen by the MILP exactly like the other degrees. HiGHS solves the real model; the K best must equal
the exhaustive enumeration (`oracle.enumerate_designs`, every point evaluated one by one) on small MoE
spaces, at every pruning level.
"""
from __future__ import annotations

import copy

import pytest
from conftest import enumerated_spaces, load_doc

import solver
from solver.api import solve
from solver.optimize import oracle

K = 5
PRUNE_LEVELS = ("none", "shapes", "points", "dominated")

# Qwen3-30B-A3B (model card [M24]): 48 layers, 128 experts of width 768, top-8.
QWEN3_30B = dict(layers=48, hidden_size=2048, ffn_hidden_size=6144, attention_heads=32, kv_heads=4, head_dim=128,
                 vocab_size=151936, seq_len=4096, moe=dict(experts=128, top_k=8, expert_ffn_hidden_size=768))

SPACES = {
    # HGX B200 (EP over 1, 2 or 4 NICs per node once it leaves the node) against GB200 NVL72 (EP inside the rack);
    # flat all-to-all, so a cross-node ep group pays for every copy it sends.
    "b200-nvl72-flat": dict(
        name="moe-exact-flat", workload=dict(model=QWEN3_30B, global_batch_size=256, precision="fp8"),
        target=dict(step_time_s=2.5), constraints=dict(platforms=["hgx-b200", "gb200-nvl72"], nic_configurations="any", rails_per_node=[1, 4],
                                                       max_gpus=256),
        parallelism=dict(tp=1, cp=1, pp=[1, 2], vp=1, microbatch_size=1, ep=[8, 16, 32])),
    # H100 and B200 nodes, hierarchical dispatch with batch overlap (the window pieces and the SM cost), and
    # expert tensor parallelism as a second decision.
    "h100-b200-overlap": dict(
        name="moe-exact-overlap",
        workload=dict(model=QWEN3_30B, global_batch_size=128, precision="bf16",
                      expert_dispatch=dict(dispatcher="hierarchical", overlap="batch_overlap")),
        target=dict(step_time_s=4.0), constraints=dict(platforms=["hgx-h100", "hgx-b200"], nic_configurations="any", rails_per_node=[2, 8],
                                                       max_gpus=128),
        parallelism=dict(tp=[1, 2], cp=1, pp=1, vp=1, microbatch_size=1, ep=[4, 8, 16], etp=[1, 2])),
}


def _cents(designs) -> list[float]:
    return [round(d.objective_usd, 2) for d in designs]


@pytest.fixture(scope="module")
def enumerated(default_catalog):
    return enumerated_spaces(SPACES, default_catalog)


@pytest.mark.parametrize("prune", PRUNE_LEVELS)
@pytest.mark.parametrize("space", list(SPACES))
def test_moe_k_best_equal_exhaustive_enumeration(space, prune, enumerated, default_catalog):
    """Same identities, same order, same objective to the cent; the enumeration's designs use ep > 1."""
    expected = oracle.best_distinct(enumerated[space], K)
    result = solve(load_doc(SPACES[space]), default_catalog, top_k=K, prune=prune)
    assert result.status == "optimal"
    assert len(expected) >= 3, "the space must offer several architectures to rank"
    assert any(d.layout.ep > 1 for d in enumerated[space])
    assert [d.identity for d in result.designs] == [d.identity for d in expected]
    assert _cents(result.designs) == _cents(expected)


def test_moe_layouts_equal_enumeration(default_catalog, enumerated):
    """--distinct-by layout: ep and etp are part of a layout's identity; the K cheapest layouts match."""
    k = 8
    expected = oracle.best_distinct(enumerated["h100-b200-overlap"], k, distinct_by="layout")
    result = solve(load_doc(SPACES["h100-b200-overlap"]), default_catalog, top_k=k, distinct_by="layout")
    assert _cents(result.designs) == _cents(expected)
    assert len({d.layout_identity for d in result.designs}) == k


def test_pinned_ep_is_respected_and_reevaluates(default_catalog, enumerated):
    """pin.ep = 16: every design uses it, the ranking is the enumeration restricted to ep = 16, and each design
    re-evaluated with every decision pinned (`solver.evaluate`) gives the same step time and capex."""
    doc = copy.deepcopy(SPACES["b200-nvl72-flat"])
    doc["pin"] = dict(ep=16)
    result = solve(load_doc(doc), default_catalog, top_k=3)
    expected = oracle.best_distinct([d for d in enumerated["b200-nvl72-flat"] if d.layout.ep == 16], 3)
    assert [d.identity for d in result.designs] == [d.identity for d in expected]
    for d in result.designs:
        a, lay = d.architecture, d.layout
        pinned = copy.deepcopy(SPACES["b200-nvl72-flat"])
        pinned["pin"] = dict(platform=a.platform, nic=a.nic, rails_per_node=a.rails_per_node, switch=a.switch,
                             tiers=d.tiers, tp=lay.tp, cp=lay.cp, pp=lay.pp, vp=lay.vp, dp=lay.dp,
                             microbatch_size=lay.microbatch_size, gpus_per_domain_used=lay.gpus_per_domain_used,
                             ep=lay.ep, etp=lay.etp)
        again = solver.evaluate(load_doc(pinned), default_catalog)
        assert again.layout.ep == 16
        assert again.perf.step_time_s == pytest.approx(d.perf.step_time_s, rel=1e-12)
        assert round(again.cost.capex_usd, 2) == round(d.cost.capex_usd, 2)


def test_evaluate_needs_ep_for_a_moe_model(default_catalog):
    doc = copy.deepcopy(SPACES["b200-nvl72-flat"])
    doc["pin"] = dict(platform="hgx-b200", nic="cx7-ndr", rails_per_node=4, tp=1, cp=1, pp=1, vp=1, dp=16,
                      microbatch_size=1)
    with pytest.raises(solver.InputError, match="missing: ep"):
        solver.evaluate(load_doc(doc), default_catalog)
