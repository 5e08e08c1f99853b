"""Beyond NVLink (issue 46): the scale-up fields (`scaleup_fabric`, `scaleup_latency_us`, GPU `dense_tflops.fp4`) are
validated with a located error (file, line, field; exit code 2; no output), and the shipped PCIe, bridged and AMD
platforms carry the published figures they cite (docs/sources.md [P1]–[P12])."""
from __future__ import annotations

import re

import pytest
from test_loading import MINI_CATALOG, assert_rejected

from solver.costing.facility import configurations

NEW_PLATFORMS = ("amd-mi300x-8", "amd-mi325x-8", "amd-mi355x-8", "pcie-rtx-pro-6000-8", "pcie-l40s-8", "pcie-h200-nvl-8",
                 "h200-nvl-bridge4", "h200-nvl-bridge2")


def _insert_after(tmp_path, line_no: int, expected: str, new_line: str):
    """A copy of the mini catalog with `new_line` inserted after line `line_no` (which must read `expected`)."""
    lines = MINI_CATALOG.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[line_no - 1].strip() == expected, lines[line_no - 1]
    lines.insert(line_no, new_line + "\n")
    out = tmp_path / "bad-catalog.yaml"
    out.write_text("".join(lines), encoding="utf-8")
    return out


def test_unknown_scaleup_fabric_is_located(tmp_path, monkeypatch, capsys):
    # line 23 "    nvlink_gbyte_s: 450" of the mini catalog; the new key lands on line 24, column 5
    bad = _insert_after(tmp_path, 23, "nvlink_gbyte_s: 450", "    scaleup_fabric: nvswitch")
    assert_rejected(bad, "catalog", f"{bad}:24:5: platforms[0].scaleup_fabric",
                    "Input should be 'nvlink', 'infinity_fabric' or 'pcie'", tmp_path, monkeypatch, capsys)


def test_negative_scaleup_latency_is_located(tmp_path, monkeypatch, capsys):
    bad = _insert_after(tmp_path, 23, "nvlink_gbyte_s: 450", "    scaleup_latency_us: -1")
    assert_rejected(bad, "catalog", f"{bad}:24:5: platforms[0].scaleup_latency_us",
                    "Input should be greater than or equal to 0", tmp_path, monkeypatch, capsys)


def test_domain_smaller_than_a_node_is_refused_with_the_reason(tmp_path, monkeypatch, capsys):
    # NVLink-bridged pairs inside an 8-GPU server: not modelled (catalogs/default.yaml lists bridge-group servers)
    lines = MINI_CATALOG.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[19].strip() == "gpus_per_domain: 8"
    lines[19] = lines[19].replace("gpus_per_domain: 8", "gpus_per_domain: 2")
    bad = tmp_path / "bad-catalog.yaml"
    bad.write_text("".join(lines), encoding="utf-8")
    err = assert_rejected(bad, "catalog", f"{bad}:17:5: platforms[0]", "gpus_per_node × nodes_per_domain = 8 × 1",
                          tmp_path, monkeypatch, capsys)
    assert "smaller than a node" in err and "not modelled" in err


# ------------------------------------------------------------------------------ the shipped figures


@pytest.mark.parametrize("pid", NEW_PLATFORMS)
def test_new_platform_is_sourced_and_orderable(pid, default_catalog):
    """Each new platform names its scale-up source, marks an estimated price, and has exactly one reference NIC
    configuration among its allowed rail counts (an architect signs the reference)."""
    plat = default_catalog.by_id("platforms")[pid]
    assert plat.scaleup_source and re.search(r"\[P\d+\]", plat.scaleup_source + plat.source)
    assert plat.price_is_estimate or plat.id == "amd-mi300x-8"  # the one dated listing ([39], 2025-02-10)
    refs = [c for c in configurations(default_catalog, pid) if c.reference]
    assert len(refs) == 1 and refs[0].rails_per_node in plat.rails_per_node_options
    assert not plat.includes_scaleout_nics and all(c.installed_per_node == c.rails_per_node
                                                  for c in configurations(default_catalog, pid))


def test_pcie_paths_are_the_link_rates_at_the_measured_fraction(default_catalog):
    """PCIe Gen5 x16 carries 64 GB/s per direction (Gen4: 32); the 8-GPU NCCL all-reduce on RTX PRO 6000 servers
    reached 37.6–41.1 GB/s busbw ([P1]): mid 39.35 / 64 = 0.61; NCCL's PCI ring step is 5.7 µs ([P3])."""
    plats = default_catalog.by_id("platforms")
    for pid, gen_rate in (("pcie-rtx-pro-6000-8", 64), ("pcie-h200-nvl-8", 64), ("pcie-l40s-8", 32)):
        p = plats[pid]
        assert (p.scaleup_fabric, p.nvlink_gbyte_s, p.scaleup_latency_us) == ("pcie", gen_rate, 5.7)
        assert p.nvlink_efficiency == pytest.approx(round((37.6 + 41.1) / 2 / 64, 2))
        assert 37.6 / 64 <= p.nvlink_efficiency <= 41.1 / 64


def test_infinity_fabric_is_seven_links_at_the_usable_share(default_catalog):
    """xGMI: 7 peers × 64 GB/s per direction per link (MI300X/MI325X), ~48 usable ([P2]: 0.75) × 0.9 ring share."""
    plats = default_catalog.by_id("platforms")
    for pid, link in (("amd-mi300x-8", 64), ("amd-mi325x-8", 64), ("amd-mi355x-8", 153.6 / 2)):
        p = plats[pid]
        assert p.scaleup_fabric == "infinity_fabric" and p.gpus_per_domain == 8
        assert p.nvlink_gbyte_s == pytest.approx(7 * link)
        assert 0.67 <= p.nvlink_efficiency <= 48 / 64 * 0.9  # 0.675, rounded down


def test_nvlink_bridges_are_small_domains_of_whole_servers(default_catalog):
    plats = default_catalog.by_id("platforms")
    for pid, g in (("h200-nvl-bridge4", 4), ("h200-nvl-bridge2", 2)):
        p = plats[pid]
        assert (p.scaleup_fabric, p.gpus_per_domain, p.gpus_per_node, p.nvlink_gbyte_s) == ("nvlink", g, g, 450)


def test_new_gpus_peaks_are_half_the_sparse_figures(default_catalog):
    gpus = default_catalog.by_id("gpus")
    assert (gpus["h200-nvl"].dense_tflops["bf16"], gpus["h200-nvl"].dense_tflops["fp8"]) == (1671 / 2, 3341 / 2)  # [P5]
    assert (gpus["l40s"].dense_tflops["bf16"], gpus["l40s"].dense_tflops["fp8"]) == (362, 1466 / 2)  # [P7]
    assert gpus["rtx-pro-6000-se"].dense_tflops["fp4"] == 4000 / 2  # "4,000 AI TOPS" FP4 sparse [P6]
    assert (gpus["mi300x"].dense_tflops["fp8"], gpus["mi325x"].hbm_gb, gpus["mi355x"].tdp_w) == (2614.9, 256, 1400)
