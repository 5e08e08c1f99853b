"""The shipped catalog (catalogs/default.yaml) and example scenarios (scenarios/*.yaml).

Checks that every file validates, that the catalog is internally consistent (ids, references,
a switch and links for every NIC generation), that every price names its source and date and
is flagged as an estimate when its source says so, and that the figures agree with the published
values they were taken from (docs/sources.md entries named in each test).
"""
from __future__ import annotations

import datetime
import re

import pytest
import yaml
from conftest import REPO

from solver.inputs import check_against_catalog, load_catalog, load_scenario
from solver.inputs.schema import TIERS, Catalog, Scenario

ROOT = REPO
CATALOG_PATH = ROOT / "catalogs" / "default.yaml"
SCENARIO_PATHS = sorted((ROOT / "scenarios").glob("*.yaml"))
# serving fleets (workload.kind: inference, issue 40) have no step-time target: tests/serving checks their comments
TRAINING_PATHS = [p for p in SCENARIO_PATHS if "kind: inference" not in p.read_text(encoding="utf-8")]
KINDS = ("gpus", "platforms", "nics", "switches", "links", "racks")
PRICED_KINDS = ("platforms", "nics", "switches", "links", "racks")


def raw_catalog() -> dict:
    return yaml.safe_load(CATALOG_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.model_validate(raw_catalog())


def priced_items(catalog: Catalog):
    for kind in PRICED_KINDS:
        for item in getattr(catalog, kind):
            yield kind, item


# ----------------------------------------------------------------------------- validation


def test_catalog_validates_with_the_schema_and_the_loader():
    Catalog.model_validate(raw_catalog())
    loaded = load_catalog([CATALOG_PATH])  # also checks GPU/NIC/rack references
    assert loaded.facility.source


def test_at_least_the_four_required_scenarios_ship():
    names = {p.name for p in SCENARIO_PATHS}
    assert {"llama3-70b.yaml", "gpt3-175b.yaml", "llama3-405b.yaml", "capped-budget-power.yaml"} <= names


@pytest.mark.parametrize("path", SCENARIO_PATHS, ids=lambda p: p.name)
def test_scenario_validates_and_matches_the_default_catalog(path):
    scenario = Scenario.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    assert scenario.top_k == 5
    loaded = load_scenario(path)
    check_against_catalog(loaded, load_catalog([CATALOG_PATH]))  # allow-list ids exist


@pytest.mark.parametrize("path", TRAINING_PATHS, ids=lambda p: p.name)
def test_scenario_comment_explains_its_target(path):
    text = path.read_text(encoding="utf-8")
    comments = "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    sc = Scenario.model_validate(yaml.safe_load(text))
    target = sc.target.step_time_s
    assert "realistic" in comments or "reachable" in comments
    if sc.objective == "fastest" and sc.site is not None:  # no target: the comment derives what the site holds
        assert f"{sc.site.power_mw_at():g} MW" in comments
        return
    if sc.objective == "fastest":  # no target: the comment derives what the budget buys
        assert f"${sc.constraints.budget_usd / 1e6:g}M" in comments
        return
    if target is None:  # a target in training days: the comment derives the step time it means
        assert f"{sc.target_step_time_s():.3f} s" in comments
        return
    assert f"{target:g} s" in comments, f"the header comment should derive the {target:g} s target"


# ------------------------------------------------------------------------ ids and references


@pytest.mark.parametrize("kind", KINDS)
def test_ids_are_unique_per_kind(kind):
    ids = [item["id"] for item in raw_catalog().get(kind, [])]
    assert ids, f"no {kind} in the catalog"
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates


def test_platform_gpus_and_nics_exist(catalog):
    gpus, nics = catalog.by_id("gpus"), catalog.by_id("nics")
    for plat in catalog.platforms:
        assert plat.gpu in gpus, plat.id
        for nic in plat.compatible_nics:
            assert nic in nics, (plat.id, nic)


def test_facility_racks_exist(catalog):
    racks = catalog.by_id("racks")
    assert catalog.facility.compute_rack in racks
    assert catalog.facility.network_rack in racks


def _served_by(catalog, nic):
    """(switch, port split) pairs that serve the NIC: same fabric, port speed / split = NIC speed."""
    out = []
    for sw in catalog.switches:
        for split in [1, *sw.breakout]:
            if sw.fabric == nic.fabric and sw.port_speed_gbps == split * nic.speed_gbps:
                out.append((sw, split))
    return out


def test_every_nic_has_a_switch_and_links_on_all_tiers(catalog):
    # A NIC is served by a switch of its fabric at its speed, natively or through a listed breakout
    # (the SN5600's 800G ports split 1:2 for 400GbE), with links of that generation and split.
    for nic in catalog.nics:
        served = _served_by(catalog, nic)
        assert served, f"no switch serves {nic.id}"
        for sw, split in served:
            tiers = {link.tier for link in catalog.links if link.generation == sw.generation and link.breakout == split}
            assert tiers == set(TIERS), f"{sw.id} split {split}: links only for {sorted(tiers)}"


def test_every_generation_and_tier_has_copper_and_an_optical_option_that_reaches(catalog):
    distance_m = catalog.facility.link_distance_m
    for generation, split in {(sw.generation, s) for nic in catalog.nics for sw, s in _served_by(catalog, nic)}:
        for tier in TIERS:
            options = [l for l in catalog.links if l.generation == generation and l.tier == tier and l.breakout == split]
            assert {l.medium for l in options} == {"copper", "optical"}, (generation, tier)
            reach = max(l.max_reach_m for l in options)
            assert reach >= getattr(distance_m, tier), (generation, tier)


def test_xdr_has_no_passive_copper_and_no_multimode(catalog):
    # docs/sources.md [24]: at 200G-PAM4 there is no passive DAC, multimode or AOC; LACC (active, so it
    # draws power) or single-mode optics (reach well beyond 50 m multimode).
    for link in (l for l in catalog.links if l.generation == "xdr"):
        assert link.w_per_link > 0, link.id
        if link.medium == "optical":
            assert link.max_reach_m >= 500, link.id


# ---------------------------------------------------------------------------------- prices

ESTIMATE_WORDS = re.compile(r"estimat", re.IGNORECASE)
ESTIMATE_TAG = re.compile(r"\bE\b")


def says_estimate(text: str) -> bool:
    return bool(ESTIMATE_WORDS.search(text) or ESTIMATE_TAG.search(text))


def test_says_estimate_reads_the_tags():
    assert says_estimate("estimate: 2 × the NDR price")
    assert says_estimate("Estimated from [40]")
    assert says_estimate("power (E)")
    assert not says_estimate("DGX B200 EU reseller list (EUR converted)")


def test_every_price_has_a_source_and_a_real_date(catalog):
    today = datetime.date.today()
    for kind, item in priced_items(catalog):
        assert item.price_source.strip(), (kind, item.id)
        parts = [int(p) for p in item.price_date.split("-")] + [1, 1]
        date = datetime.date(parts[0], parts[1], parts[2])  # raises on month 13 or day 32
        assert datetime.date(2019, 1, 1) <= date <= today, (kind, item.id, item.price_date)


def test_estimate_flag_matches_the_price_source(catalog):
    for kind, item in priced_items(catalog):
        assert item.price_is_estimate == says_estimate(item.price_source), (kind, item.id, item.price_source)


def test_parts_with_no_public_price_are_estimates(catalog):
    # docs/sources.md §prices / §gaps: no sourced price for NICs, transceivers, cables, Quantum-X800,
    # DGX B300 or HGX B200; the NVL72 rack prices are press/blog figures.
    for kind in ("nics", "links"):
        for item in getattr(catalog, kind):
            assert item.price_is_estimate, (kind, item.id)
    for ident in ("q3400", "sn5600"):
        assert catalog.by_id("switches")[ident].price_is_estimate
    for ident in ("dgx-b300", "hgx-b200", "gb200-nvl72", "gb300-nvl72", "dgx-a100"):
        assert catalog.by_id("platforms")[ident].price_is_estimate


def test_dated_listings_keep_the_published_price(catalog):
    # docs/sources.md §prices, Epoch 'Hardware prices.csv' [39] rows, price per chip × 8.
    plat = catalog.by_id("platforms")
    assert plat["hgx-h100"].unit_price_usd == 8 * 31_905  # 255,240, "≈ $255,200"
    assert plat["hgx-h200"].unit_price_usd == pytest.approx(8 * 39_083, abs=100)  # 312,664
    assert plat["dgx-b200"].unit_price_usd == pytest.approx(8 * 47_409, abs=100)  # 379,272
    assert plat["dgx-h100"].unit_price_usd == 375_000
    assert plat["gb200-nvl72"].unit_price_usd == 3_000_000  # "~NT$96M ≈ $3M" [42]


def test_ndr_optical_links_reproduce_the_published_cable_cost_per_gpu(catalog):
    # [40] (Aug 2024): IB cables + transceivers per H100 GPU, one 400G rail per GPU:
    # $1,320 with 1 tier (one node–leaf link per GPU) and $2,560 with 2 tiers (plus one
    # leaf–spine link per GPU in a non-blocking tree). Tolerance 3%.
    links = catalog.by_id("links")
    node_leaf = links["ndr-node-leaf-sr"].usd_per_link
    leaf_spine = links["ndr-leaf-spine-sr"].usd_per_link
    assert node_leaf == pytest.approx(1_320, rel=0.03)
    assert node_leaf + leaf_spine == pytest.approx(2_560, rel=0.03)


def test_ndr_optics_for_1024_gpus_exceed_the_published_floor(catalog):
    # [39b]: ">$1.5M of optics at NVIDIA list for 1,024 GPUs" (128 DGX H100, 2 tiers).
    # Non-blocking 2 tiers, 1,024 endpoints: node–leaf 1,024 links = 512 twin-port modules at the
    # leaves + 1,024 single-port at the NICs; leaf–spine 1,024 links = 512 twin-port at each side.
    links = catalog.by_id("links")
    nl, ls = links["ndr-node-leaf-sr"], links["ndr-leaf-spine-sr"]
    modules_usd = (
        512 * nl.switch_end_module_usd + 1024 * nl.far_end_module_usd
        + 512 * ls.switch_end_module_usd + 512 * ls.far_end_module_usd
    )
    assert modules_usd > 1.5e6
    # and not absurdly above it: third-party modules are "~55% cheaper", so list < ~2 × 1.5M
    assert modules_usd < 3.0e6


def test_twin_port_modules_serve_two_links(catalog):
    # docs/sources.md §links: a twin-port OSFP at the switch serves 2 links; a NIC-end module serves 1.
    for link in catalog.links:
        if link.switch_end_module_usd > 0:
            assert link.switch_end_links_per_module == 2, link.id
        if link.tier == "node_leaf" and link.far_end_module_usd > 0:
            assert link.far_end_links_per_module == 1, link.id


# ------------------------------------------------------------------------------ citations

SOURCES_PATH = ROOT / "docs" / "sources.md"
SOURCE_ID = r"(?:\d{1,2}b?|[CXSMDNFORGLWKPTH]\d{1,2})"  # [40], [39b], [C3], [X1], [S2], [M7], [D3], [N1], [F1], [O1], [R1], [G1], [L1], [W1], [K1], [P1], [T1], [H1]
SOURCE_CHAIN = re.compile(r"docs/sources\.md((?:\s*\[[^\]\s]*\])+)")  # docs/sources.md [5][6]
BARE_ID = re.compile(rf"\[({SOURCE_ID})\]")
SECTION = re.compile(r"§([a-z][a-z-]*)")  # docs/sources.md §prices (§1.1 of a user guide is not one)
COMMENT = re.compile(r"(?:^|\s)#(?!\d)(.*)$")  # "# …" but not "nccl #412"
OUTSIDE_REFERENCES = re.compile(r"hardware\.md|calibration\.md|moe\.md|stack-notes|SPEC\s*§|/work/shared|reference/")


def yaml_strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from yaml_strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from yaml_strings(value)


def test_every_cited_source_is_an_entry_of_docs_sources():
    # The shipped files cite docs/sources.md by entry id ("docs/sources.md [40]"; a bare [40] in a
    # source string or comment means the same) and by section ("docs/sources.md §prices"). Each must
    # exist there, and nothing may cite the research notes outside the repository.
    sources = SOURCES_PATH.read_text(encoding="utf-8")
    entries = set(re.findall(rf"^(?:- \*\*\[({SOURCE_ID})\]\*\*|#+ \[({SOURCE_ID})\] )", sources, re.MULTILINE))
    entries = {a or b for a, b in entries}
    sections = set(re.findall(r"^#+ §([a-z][a-z-]*) ", sources, re.MULTILINE))
    assert {"1", "39", "39b", "40", "69", "C1", "C8", "X1", "M1"} <= entries
    cited_ids, cited_sections = set(), set()
    presets = sorted((ROOT / "solver" / "inputs" / "models").glob("*.yaml"))  # model presets cite [H1]-[H12]
    for path in sorted((ROOT / "catalogs").glob("*.yaml")) + SCENARIO_PATHS + presets:
        text = path.read_text(encoding="utf-8")
        assert not OUTSIDE_REFERENCES.search(text), f"{path.name}: {OUTSIDE_REFERENCES.search(text).group()}"
        for chain in SOURCE_CHAIN.findall(text):
            for ident in re.findall(r"\[([^\]]*)\]", chain):
                cited_ids.add((path.name, ident))
        comments = [m.group(1) for line in text.splitlines() if (m := COMMENT.search(line))]
        for piece in [*yaml_strings(yaml.safe_load(text)), *comments]:
            cited_ids.update((path.name, ident) for ident in BARE_ID.findall(piece))
            cited_sections.update((path.name, name) for name in SECTION.findall(piece))
    assert len(cited_ids) > 50 and cited_sections
    missing = sorted(c for c in cited_ids if c[1] not in entries)
    assert not missing, f"cited but not an entry of docs/sources.md: {missing}"
    missing = sorted(c for c in cited_sections if c[1] not in sections)
    assert not missing, f"cited but not a section of docs/sources.md: {missing}"


# ------------------------------------------------------------------------ hardware figures


def test_dense_tflops_are_half_the_sparse_datasheet_figures(catalog):
    gpus = catalog.by_id("gpus")
    # H100: datasheet BF16 1,979 / FP8 3,958 "with sparsity" [2] → 989 / 1,979 dense
    assert gpus["h100-sxm"].dense_tflops["bf16"] == pytest.approx(1979 / 2, abs=1)
    assert gpus["h100-sxm"].dense_tflops["fp8"] == pytest.approx(3958 / 2, abs=1)
    # HGX B200 "BF16 4.5 PF, FP8 9 PF" sparse [6] → 2,250 / 4,500; GB200 5 / 10 PF → 2,500 / 5,000
    assert gpus["b200"].dense_tflops["bf16"] == 4500 / 2
    assert gpus["b200"].dense_tflops["fp8"] == 9000 / 2
    assert gpus["gb200"].dense_tflops["bf16"] == 5000 / 2
    assert gpus["gb200"].dense_tflops["fp8"] == 10000 / 2


def test_a100_has_no_faster_fp8(catalog):
    a100 = catalog.by_id("gpus")["a100-80gb"]
    assert a100.dense_tflops["bf16"] == 312  # A100 datasheet: BF16 312 dense / 624 sparse
    assert a100.dense_tflops["fp8"] == a100.dense_tflops["bf16"]


def test_memory_is_the_usable_shipping_figure(catalog):
    # docs/sources.md §gpus notes: DGX B200 1,440 GB / 8 = 180; "GB200 186GB"; "B300-SXM-270GB"; GB300 279.
    gpus = catalog.by_id("gpus")
    assert gpus["b200"].hbm_gb == 1440 / 8
    assert (gpus["gb200"].hbm_gb, gpus["b300"].hbm_gb, gpus["gb300"].hbm_gb) == (186, 270, 279)


def test_nvlink_is_per_direction(catalog):
    # NVIDIA quotes both directions added: A100 600, Hopper 900, Blackwell 1,800 GB/s [5][51].
    # (issue 46) H200 NVL's bridges: 900 GB/s per GPU [P5]; PCIe and Infinity Fabric platforms: tests/inputs/test_beyond_nvlink.py
    bidirectional = {"a100-80gb": 600, "h100-sxm": 900, "h200": 900, "b200": 1800, "b300": 1800, "gb200": 1800, "gb300": 1800,
                     "h200-nvl": 900}
    for plat in (p for p in catalog.platforms if p.scaleup_fabric == "nvlink"):
        assert plat.nvlink_gbyte_s == bidirectional[plat.gpu] / 2, plat.id


def test_nvlink_efficiency_within_the_measured_range(catalog):
    # docs/sources.md §nccl (the calibration owns the exact values): the lowest measured NVLink ratio is
    # A100's ~160 of 300 GB/s (0.53, NVIDIA/nccl #412), the highest Ring ratio B200's 830 of 900
    # (0.92, [56]); NVLS busbw above the wire rate is an all-reduce artefact, not a link rate.
    for plat in catalog.platforms:
        assert 160 / 300 - 0.01 <= plat.nvlink_efficiency <= 830 / 900 + 0.01, plat.id


def test_nic_efficiency_within_the_measured_range(catalog):
    # [60]: 4 HGX nodes, 8 × 400G NICs each: 366 GB/s busbw of 8 × 50 = 400 GB/s → 0.915;
    # [59]: ~24 of 25 GB/s per HDR NIC → 0.96. Calibrated values must stay within them.
    for nic in catalog.nics:
        assert 366 / 400 - 0.01 <= nic.efficiency <= 24 / 25 + 0.005, nic.id
        assert nic.efficiency_source.strip(), nic.id


def test_power_per_gpu_matches_the_system_figures(catalog):
    # docs/sources.md §power: system maximum / GPUs, host and NICs included.
    expected_kw_per_gpu = {
        "dgx-h100": 10.2 / 8,      # 1.275 ≈ "1.28 kW"
        "dgx-b200": 14.3 / 8,      # 1.7875 ≈ "1.79 kW"
        "dgx-b300": 14.5 / 8,      # 1.8125 ≈ "1.81 kW"
        "gb200-nvl72": 120 / 72,   # 1.667 ≈ "~1.67 kW"
        "gb300-nvl72": 142 / 72,   # 1.972 ≈ "1.97 kW"
    }
    plat = catalog.by_id("platforms")
    for ident, kw in expected_kw_per_gpu.items():
        assert plat[ident].unit_power_kw / plat[ident].gpus_per_domain == pytest.approx(kw, abs=0.01), ident


def test_nvl72_is_one_rack_of_18_trays_of_4(catalog):
    for ident in ("gb200-nvl72", "gb300-nvl72"):
        p = catalog.by_id("platforms")[ident]
        assert (p.gpus_per_domain, p.gpus_per_node, p.nodes_per_domain) == (72, 4, 18)
        assert p.unit == "domain" and p.unit_is_rack and p.includes_scaleout_nics
        assert 4 in p.rails_per_node_options and max(p.rails_per_node_options) == 4


def test_dgx_includes_its_nics_and_oem_hgx_does_not(catalog):
    for plat in catalog.platforms:
        if plat.id.startswith("dgx-"):
            assert plat.includes_scaleout_nics and len(plat.compatible_nics) == 1, plat.id
        if plat.id.startswith("hgx-"):
            assert not plat.includes_scaleout_nics, plat.id
        if plat.gpus_per_domain == 8:
            assert plat.rails_per_node_options == [1, 2, 4, 8], plat.id


def test_switch_radix_and_ports(catalog):
    sw = catalog.by_id("switches")
    # docs/sources.md §switches: QM8700 40 × 200G; QM9700 64 × 400G; Q3400 144 × 800G;
    # SN5600 64 × 800GbE, documented as 128 × 400GbE ([F5]): breakout [2]. No documented split for
    # the Q3400 (288 × 400G is not in the vendor's pages, docs/sources.md §fabrics) nor used for QM9700.
    assert (sw["qm8700"].radix, sw["qm8700"].port_speed_gbps) == (40, 200)
    assert (sw["qm9700"].radix, sw["qm9700"].port_speed_gbps) == (64, 400)
    assert (sw["q3400"].radix, sw["q3400"].port_speed_gbps) == (144, 800)
    assert (sw["sn5600"].radix, sw["sn5600"].port_speed_gbps, sw["sn5600"].breakout) == (64, 800, [2])
    assert sw["q3400"].breakout == [] and sw["qm9700"].breakout == []
    assert sw["qm9700"].power_w == 747  # typical, passive cables [17]


# ---------------------------------------------------------------------- scenario targets


def model_flops_per_step(scenario: Scenario) -> float:
    """SPEC §4.1: F_model = 3·B·s·(L·(2·P_mm + 4·s·h) + 2·h·V), P_mm = h(h + 2h_kv) + h² + k_ff·h·f."""
    m = scenario.workload.model
    h_kv = m.hidden_size * (m.kv_heads or m.attention_heads) / m.attention_heads
    k_ff = 3 if m.ffn_type == "swiglu" else 2
    p_mm = m.hidden_size * (m.hidden_size + 2 * h_kv) + m.hidden_size ** 2 + k_ff * m.hidden_size * m.ffn_hidden_size
    per_token = m.layers * (2 * p_mm + 4 * m.seq_len * m.hidden_size) + 2 * m.hidden_size * m.vocab_size
    return 3 * scenario.workload.global_batch_size * m.seq_len * per_token


def scenario(name: str) -> Scenario:
    return Scenario.model_validate(yaml.safe_load((ROOT / "scenarios" / f"{name}.yaml").read_text(encoding="utf-8")))


def test_model_flops_helper_against_hand_arithmetic():
    # llama3-405b.yaml header: P_mm = 3,187,671,040; per token 8.7514e11; × 3 × 2048 × 8192.
    assert model_flops_per_step(scenario("llama3-405b")) == pytest.approx(4.4047e19, rel=1e-4)
    # GPT check formula (SPEC §4.1): 72·B·s·L·h²·(1 + s/(6h) + V/(12Lh)) for gpt3-175b.
    B, s, L, h, V = 1536, 2048, 96, 12288, 51200
    gpt = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))
    assert model_flops_per_step(scenario("gpt3-175b")) == pytest.approx(gpt, rel=1e-9)


# pinned ones are evaluations; `fastest` ones have no target to size against
SEARCH_SCENARIOS = [p for p in TRAINING_PATHS if not p.name.startswith("evaluate-")
                    and yaml.safe_load(p.read_text(encoding="utf-8")).get("objective") != "fastest"]
FRONTIER = [p for p in SEARCH_SCENARIOS if p.name.startswith("frontier-")]  # the ≥ 100k-GPU examples (issue 15)
# Mixture-of-Experts examples derive their targets from published MoE runs instead (tests/perf/test_moe_examples.py)
DENSE_SEARCH_SCENARIOS = [p for p in SEARCH_SCENARIOS if "moe" not in yaml.safe_load(p.read_text())["workload"]["model"]]


# goodput-32k.yaml is sized at ~32k Blackwell GPUs on purpose: goodput changes its answer (tests/test_goodput.py)
@pytest.mark.parametrize("path", [p for p in DENSE_SEARCH_SCENARIOS if p not in FRONTIER and p.name != "goodput-32k.yaml"],
                         ids=lambda p: p.name)
def test_target_needs_between_1k_and_16k_hopper_gpus(path):
    # Sizing anchor: ~400 TFLOP/s of model FLOPs per H100 in BF16 (Llama 3 405B on 16k H100s,
    # MFU 0.4042 in Epoch's dataset, docs/sources.md [62]: 0.4042 × 989 = 400).
    sc = Scenario.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    gpus = model_flops_per_step(sc) / (sc.target_step_time_s() * 400e12)
    assert 1_000 <= gpus <= 16_384, f"{path.name}: {gpus:.0f} H100s"
    if sc.constraints.max_gpus is not None:
        assert gpus <= sc.constraints.max_gpus


def test_frontier_scenario_needs_more_than_one_ndr_fat_tree_holds():
    # frontier-100k.yaml header: F_model = 3.4726e20; at the sizing anchor above (~400 TFLOP/s of
    # model FLOPs per H100) the 8.5 s target (8 s before the physics v2 merge) needs
    # 3.4726e20 / (8.5 · 400e12) ≈ 102,100 GPUs: beyond the
    # 65,536 endpoints of one 3-tier fat tree of 64-port switches (k³/4, docs/sources.md [C8]), so
    # 8-rail H100 nodes need another fabric family.
    sc = scenario("frontier-100k")
    assert model_flops_per_step(sc) == pytest.approx(3.4726e20, rel=1e-4)
    gpus = model_flops_per_step(sc) / (sc.target_step_time_s() * 400e12)
    assert 100_000 <= gpus <= sc.constraints.max_gpus
    assert gpus > 64 ** 3 / 4


def test_capped_scenario_caps_rule_out_hopper_but_not_blackwell(catalog):
    sc = scenario("capped-budget-power")
    plat, nics = catalog.by_id("platforms"), catalog.by_id("nics")
    pue = catalog.facility.pue
    flops = model_flops_per_step(sc)

    def nodes_needed(tflops_per_gpu: float) -> int:
        return -(-int(flops / (sc.target_step_time_s() * tflops_per_gpu * 1e12)) // 8)

    # Hopper at 400 TFLOP/s (as above): nodes and their 8 NICs alone break both caps.
    h100, cx7 = plat["hgx-h100"], nics["cx7-ndr"]
    n = nodes_needed(400)
    assert n * (h100.unit_price_usd + 8 * cx7.unit_price_usd) > sc.constraints.budget_usd
    assert n * h100.unit_power_kw > sc.constraints.facility_power_kw
    # HGX B200 at 0.45 × 2,250 TFLOP/s: nodes + NICs at < 2/3 of the budget (leaves the fabric
    # room) and facility power under the cap.
    b200 = plat["hgx-b200"]
    n = nodes_needed(0.45 * 2250)
    assert n * (b200.unit_price_usd + 8 * cx7.unit_price_usd) < sc.constraints.budget_usd * 2 / 3
    assert n * b200.unit_power_kw * pue < sc.constraints.facility_power_kw
