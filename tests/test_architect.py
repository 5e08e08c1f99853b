"""Designs an architect signs (issue #42, SPEC §5.3): a fat tree's one tier is one switch (a switch per rail
with no spine is rail-only), every design names the published architecture it follows or says "none", and
multi-plane designs carry their reference and the cross-plane (PXN) caveat in every output. Expected
names and counts are worked out in each docstring from the references (docs/sources.md [O1][O2][F1])."""
from __future__ import annotations

import copy

import solver
from solver.fabrics.references import DEEPSEEK, FabricFacts, fabric_caveats, reference_design

GPT3_1_3B = dict(layers=24, hidden_size=2048, ffn_hidden_size=8192, ffn_type="gelu", attention_heads=16,
                 vocab_size=51200, seq_len=2048)
BASE = dict(name="architect", workload=dict(model=GPT3_1_3B, global_batch_size=512), target=dict(step_time_s=2.0))


def test_reference_names_the_superpod_and_its_scalable_units():
    """DGX H100 on QM9700, 2 tiers, non-blocking, 127 nodes: the H100 RA, ⌈127/32⌉ = 4 SU ([O1] Table 7);
    B200 at 64 nodes: the B200 RA, 2 SU ([O2]); GB200 NVL72, 144 trays: 1 SU of 8 racks ([O3])."""
    assert reference_design(FabricFacts("dgx-h100", "fat-tree", "qm9700", False, 2, 127)) == \
        "DGX SuperPOD H100 RA (RA-11333-001), 4 SU"
    assert reference_design(FabricFacts("hgx-b200", "fat-tree", "qm9700", False, 2, 64)).endswith("B200 RA, 2 SU")
    assert reference_design(FabricFacts("gb200-nvl72", "fat-tree", "qm9700", False, 2, 144)).endswith("GB200 RA, 1 SU")


def test_none_with_its_reason_and_caveat():
    """Rail-only, an oversubscribed leaf, one switch, a non-reference NIC configuration, a switch the RA does not
    use: "none (why)"; a "none" reference is a caveat (rail-only keeps its own family caveat instead)."""
    cases = [FabricFacts("dgx-h100", "rail-only", "qm9700", False, 1, 16),
             FabricFacts("dgx-h100", "fat-tree", "qm9700", False, 2, 127, oversubscription=2.0),
             FabricFacts("dgx-h100", "fat-tree", "qm9700", False, 1, 8),
             FabricFacts("dgx-h100", "fat-tree", "qm9700", False, 2, 127, reference_nics=False),
             FabricFacts("dgx-h100", "fat-tree", "q3400", False, 2, 127)]
    for facts in cases:
        ref = reference_design(facts)
        assert ref.startswith("none (")
        caveats = fabric_caveats(facts, ref)
        assert bool(caveats) == (facts.family != "rail-only")


def test_multi_plane_names_deepseek_or_spectrum_x_and_pxn():
    """InfiniBand multi-plane: DeepSeek's deployed 8-plane fabric [F1]; Ethernet: Spectrum-X multiplane. Its
    caveat names the reference and the NVLink (PXN) crossing."""
    ib = FabricFacts("dgx-h100", "multi-plane", "qm9700", False, 2, 2048)
    assert reference_design(ib) == DEEPSEEK
    (text,) = fabric_caveats(ib, reference_design(ib))
    assert "DeepSeek" in text and "PXN" in text and "NVLink" in text
    eth = FabricFacts("hgx-h100", "multi-plane", "sn5600", True, 2, 2048)
    assert "Spectrum-X multiplane" in reference_design(eth)


def test_solved_designs_carry_reference_in_json_and_summary(default_catalog):
    """A solve of 32 DGX-class H100 nodes' worth of work: every design has `reference_design` in its JSON; a
    multi-plane one has the PXN caveat in `caveats` (the list every output prints), a fat tree's names an RA
    or says none with a caveat. The fat tree never offers one spine-less switch per rail (SPEC §5.3)."""
    doc = copy.deepcopy(BASE)
    doc["constraints"] = {"platforms": ["dgx-h100"], "max_gpus": 512}
    result = solver.solve(solver.load_scenario(doc), default_catalog, top_k=3)
    assert result.designs, result.explanation
    for d in result.designs:
        out = d.to_dict()
        assert out["reference_design"] == d.reference_design
        if d.architecture.fabric == "multi-plane":
            assert any("PXN" in c for c in out["caveats"])
        if d.architecture.fabric == "fat-tree" and d.tiers == 1:
            assert d.cost.fabric.leaf_switches == 1  # one switch, never one per rail
        if d.reference_design.startswith("none"):
            assert any("reference design: none" in c or "rail-only" in c for c in out["caveats"])
