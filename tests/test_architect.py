"""Designs an architect signs (issue #42, SPEC §5.3): a fat tree's one tier is one switch (a switch per rail
with no spine is rail-only), every design names the published architecture it follows or says "none", and
multi-plane designs carry their reference and the cross-plane (PXN) caveat in every output. Expected
names and counts are worked out in each docstring from the references (docs/sources.md [O1][O2][F1])."""
from __future__ import annotations

import copy

import pytest
from conftest import GPT3_1_3B

import solver
from solver.costing import design_cost
from solver.fabrics.references import DEEPSEEK, FabricFacts, fabric_caveats, reference_design

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


# ------------------------------------------------------------------ spares packed into the scalable units

SUPERPOD_H100 = [  # (scalable units, nodes, leaf, spine, core)
    # DGX SuperPOD H100 RA (RA-11333-001 V11) Table 4 "Compute fabric component count" (docs/sources.md [O1]): an SU
    # is 32 nodes with one leaf port per rail group taken by UFM, so 31, 63, 127 nodes; 1 SU 8/4, 2 SU 16/8, 4 SU 32/16.
    (1, 31, 8, 4, 0), (2, 63, 16, 8, 0), (4, 127, 32, 16, 0),
    # beyond 4 SU the H100 RA defers to NVIDIA; the DGX SuperPOD B200 RA's table for the same 32-node SU on QM9700
    # ([O2]/[F11]): 8 SU 64 leaf + 32 spine, 16 SU 128 leaf + 128 spine + 64 core (the 255 and 511 nodes of the
    # H100 count fill the same leaf groups).
    (8, 255, 64, 32, 0), (16, 511, 128, 128, 64),
]


@pytest.mark.parametrize("sus,nodes,leaf,spine,core", SUPERPOD_H100)
def test_superpod_switch_counts_with_spares_on(sus, nodes, leaf, spine, core, default_catalog):
    """`evaluate`'s costing of the DGX H100 SuperPOD at 1–16 SU with hot spares on (the default availability rule):
    the fabric is the job's (the RA's counts); the spares take the free leaf ports — the SUs' 32-node leaf groups
    hold 32 · SUs − nodes = 1 more node — and the others are bought but not cabled (stated in the caveats)."""
    sc = solver.load_scenario(copy.deepcopy(BASE)).scenario
    cost = design_cost(sc, default_catalog, "dgx-h100", "cx7-ndr", 8, "qm9700", 1.0, nodes)
    f = cost.fabric
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (leaf, spine, core)
    assert cost.spare_units >= 2  # the availability rule buys spares at every size
    assert cost.cabled_spare_units == 32 * sus - nodes == 1
    assert f.links["node_leaf"] == 8 * 32 * sus  # every leaf port of the SUs used: job nodes and the cabled spare
    assert cost.nodes == nodes + cost.spare_units  # what is bought: the pinned count plus the spares beside it
    sites = {line.part: line.quantity for line in cost.bom}
    assert sites["storage-fabric-hgx"] == 4 * sus  # the SUs of the cabled nodes, not of the uncabled spares


def test_deepseek_2048_node_multi_plane_stays_two_tiers(default_catalog):
    """DeepSeek's 2,048 eight-GPU nodes on 8 planes of 64-port switches in 2 tiers ([F1]): 64 · 32 = 2,048 nodes per
    plane fill it, so the spares cannot be cabled (stated) and the fabric stays 2 tiers: 8 · (64 + 32) = 768
    switches, not 3 tiers for a few spares."""
    sc = solver.load_scenario(copy.deepcopy(BASE)).scenario
    cost = design_cost(sc, default_catalog, "dgx-h100", "cx7-ndr", 8, "qm9700", 1.0, 2048, None, "multi-plane")
    assert cost.fabric.tiers == 2 and cost.fabric.total_switches == 768
    assert cost.spare_units > 0 and cost.cabled_spare_units == 0


def test_uncabled_spares_are_a_caveat(default_catalog):
    """A design whose spares do not all fit the free ports says so in its caveats and JSON `spares`."""
    from solver.design_space import Architecture
    from solver.perf.layout import Layout
    from solver.results import make_design

    sc = solver.load_scenario(copy.deepcopy(BASE)).scenario
    arch = Architecture("dgx-h100", "cx7-ndr", 8, "qm9700", 1.0)
    d = make_design(sc, default_catalog, arch, Layout(tp=8, cp=1, pp=1, vp=1, dp=127, microbatch_size=1,
                                                      gpus_per_domain_used=8), 100.0)
    out = d.to_dict()["spares"]
    assert out["cabled_units"] == 1 and out["uncabled_units"] == d.cost.spare_units - 1
    assert out["job_nodes"] == 127 and out["cabled_nodes"] == 128
    assert any("not cabled" in c for c in d.caveats)
    assert d.reference_design == "DGX SuperPOD H100 RA (RA-11333-001), 4 SU"


def test_byterobust_goodput_at_9600_gpus_held_out(default_catalog):
    """Held out (not fitted on): ByteRobust (ByteDance, arXiv:2509.16293) reports 97 % effective training time for
    a three-month job on 9,600 GPUs. With the shipped defaults (Llama 3 failure rates, 5-min restart [G5], 0.87
    planned stops/day) a 405B-class dense job on 1,200 HGX H100 nodes (8 × 400G, SN5600 split to 128 × 400G, 64
    down per leaf → 8 · ⌈1,200/64⌉ = 152 leaves) must land within 95–99 %. By hand: per year GPUs 9,600 · 0.1106 =
    1,061.8, software 249.6, nodes 1,200 · 0.1518 = 182.2, NICs 27.7, links 69.3, leaves 152 · 0.1155 = 17.6 →
    1,608.2 = 4.41/day, M = 19,609 s; δ = 5.683e12 / (0.122e9 · 9,600) = 4.85 s, τ = √(2 · 4.85 · 19,609) = 436 s;
    lost = 4.85/436 + (218 + 300)/19,609 + 0.87 · 300/86,400 = 0.0111 + 0.0264 + 0.0030 → 0.959."""
    from solver.fabrics import FabricSpec, family
    from solver.failures import goodput_of, inputs_for, job_parts

    sc = solver.load_scenario({"name": "br", "workload": {"model": dict(LLAMA3_405B), "global_batch_size": 2048},
                               "target": {"step_time_s": 100.0}}).scenario
    inputs = inputs_for(sc, default_catalog)
    fabric = family("fat-tree").size(1200, FabricSpec(128, 8))
    assert fabric.leaf_switches == 152
    g = float(goodput_of(inputs, job_parts("fat-tree", 9600, 1200, 8, fabric, 1200)))
    assert 0.95 <= g <= 0.99
    assert g == pytest.approx(0.959, abs=0.002)


LLAMA3_405B = dict(layers=126, hidden_size=16384, ffn_hidden_size=53248, attention_heads=128, kv_heads=8,
                   vocab_size=128256, seq_len=8192, ffn_type="swiglu", tied_embeddings=False)


# ------------------------------------------------------------------ capex line by line against the reference BOM


def test_dgx_h100_4su_bom_has_the_reference_lines(default_catalog):
    """DGX SuperPOD H100 RA (RA-11333-001 V11) Appendix A Table 7, 4 SU, 127 nodes (docs/sources.md [O1]): 38 racks,
    4 UFM appliances, 5 management servers, 48 compute + 16 storage QM9700, 8 in-band + 8 OOB switches; the
    compute fabric's node end is 4 twin-port OSFP per DGX (127 · 4 = 508, not 1,016 single-port: 'the compute
    fabric ports in the middle use a two-port transceiver to access all eight GPUs'); 2 storage + 2 in-band
    ports and 1 BMC port per node ([O1] Figure 4): 508 and 127 node cables. Spares off: the RA's node count."""
    sc = solver.load_scenario({**copy.deepcopy(BASE), "reliability": {"spares": False}}).scenario
    cost = design_cost(sc, default_catalog, "dgx-h100", "cx7-ndr", 8, "qm9700", 1.0, 127)
    parts: dict = {}
    for line in cost.bom:
        parts[(line.part, line.description)] = parts.get((line.part, line.description), 0) + line.quantity
    by_part: dict = {}
    for (part, _), n in parts.items():
        by_part[part] = by_part.get(part, 0) + n
    assert by_part["ufm-appliance"] == 4 and by_part["mgmt-servers"] == 5
    assert by_part["storage-fabric-hgx"] == 16 and by_part["inband-mgmt-hgx"] == 8 and by_part["oob-mgmt-hgx"] == 8
    assert cost.fabric.total_switches == 48
    assert by_part["storage-inband-node-cables-hgx"] == 4 * 127 and by_part["oob-node-cables"] == 127
    assert cost.racks + by_part["mgmt-racks-hgx"] == 38
    node_end = [line for line in cost.bom if line.part == "ndr-node-leaf-sr" and "far" in line.description.lower()]
    switch_end = [line for line in cost.bom if line.part == "ndr-node-leaf-sr" and "switch" in line.description.lower()]
    assert [x.quantity for x in node_end] == [508] and [x.quantity for x in switch_end] == [508]


def test_gb200_su_storage_and_inband_node_cables(default_catalog):
    """One GB200 SU (8 NVL72 racks = 144 trays, [O3]): 4 × 200GbE storage/in-band ports per tray (2 BlueField-3) =
    576 node cables, beside the SU's Ethernet switches; UFM and management servers for its InfiniBand fabric."""
    sc = solver.load_scenario({**copy.deepcopy(BASE), "reliability": {"spares": False}}).scenario
    cost = design_cost(sc, default_catalog, "gb200-nvl72", "cx7-ndr", 4, "qm9700", 1.0, 8)
    by_part: dict = {}
    for line in cost.bom:
        by_part[line.part] = by_part.get(line.part, 0) + line.quantity
    assert by_part["storage-inband-node-cables-nvl72"] == 576
    assert by_part["storage-inband-nvl72"] == 4 and by_part["ufm-appliance"] == 4


def test_ufm_only_on_infiniband(default_catalog):
    """UFM manages InfiniBand: an Ethernet (SN5600) compute fabric has no UFM line; the storage system is a stated
    exclusion (its checkpoint bandwidth is assumed in goodput, not bought)."""
    from solver.costing.facility import capex_scope_text

    sc = solver.load_scenario(copy.deepcopy(BASE)).scenario
    cost = design_cost(sc, default_catalog, "hgx-h100", "bf3-400gbe", 8, "sn5600", 1.0, 32)
    assert not [x for x in cost.bom if x.part == "ufm-appliance"]
    _, leaves_out = capex_scope_text({x.category for x in cost.bom})
    assert "storage system (checkpoint capacity and write bandwidth" in leaves_out


@pytest.mark.parametrize("sus,nodes,leaf,spine,core", SUPERPOD_H100)
def test_evaluate_of_the_superpod_gives_the_reference_counts(sus, nodes, leaf, spine, core, default_catalog):
    """`fabricplan evaluate` of a job pinned on `nodes` DGX H100 (TP 8 inside each node, DP = nodes, global batch a
    multiple of it) with the default hot spares: the reference's leaf/spine/core counts ([O1] Table 4; [O2] at 8 and
    16 SU), the reference design named, the spares listed beside the cabled count."""
    doc = copy.deepcopy(BASE)
    doc["workload"]["global_batch_size"] = nodes * (512 // nodes)
    doc["target"] = {"step_time_s": 100.0}
    doc["pin"] = dict(platform="dgx-h100", nic="cx7-ndr", rails_per_node=8, switch="qm9700", fabric="fat-tree",
                      tp=8, cp=1, pp=1, vp=1, dp=nodes, microbatch_size=1)
    d = solver.evaluate(solver.load_scenario(doc), default_catalog)
    f = d.cost.fabric
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (leaf, spine, core)
    assert d.cost.job_nodes == nodes and d.cost.cabled_nodes == 32 * sus
    assert d.reference_design == f"DGX SuperPOD H100 RA (RA-11333-001), {sus} SU"
    assert d.to_dict()["spares"]["units"] == d.cost.spare_units > 0
