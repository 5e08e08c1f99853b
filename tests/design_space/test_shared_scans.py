"""Platforms that differ only in price share their dominance scans (issue 26, sixth pass): a real catalog lists the
same board from several vendors (`hgx-h100` and `dgx-h100` here; an OEM's build of an HGX board), and the scan reads
of a platform only its nodes at each d and its GPUs per node (`scan.ScanContext.points`: the scan memo's key). The copy
here is hgx-h100 under another id, at another price, with its own copy of the ConnectX-7: every step time is the
original's, every cost its own. Checked two ways: each platform keeps the points it keeps when built alone, and the
K best equal the exhaustive enumeration's, with the copy scanned first (cheaper) and second (dearer)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import GPT3_1_3B, REPO, enumerated_designs

import solver
from solver.design_space import build_design_space
from solver.optimize import oracle


def _copy_catalog(tmp: Path, price_factor: float):
    """The default catalog and an overlay with hgx-h100-oem (hgx-h100's price × `price_factor`) and its cx7-ndr-oem."""
    base = yaml.safe_load((REPO / "catalogs" / "default.yaml").read_text(encoding="utf-8"))
    plat = dict(next(p for p in base["platforms"] if p["id"] == "hgx-h100"))
    nic = dict(next(n for n in base["nics"] if n["id"] == "cx7-ndr"))
    plat.update(id="hgx-h100-oem", name="HGX H100, an OEM's build (test copy)", compatible_nics=["cx7-ndr-oem"],
                unit_price_usd=round(plat["unit_price_usd"] * price_factor, 2), price_is_estimate=True,
                price_source="test: hgx-h100's price times a factor")
    nic.update(id="cx7-ndr-oem", name="ConnectX-7 (test copy)", price_is_estimate=True, price_source="test: a copy")
    overlay = tmp / "oem.yaml"
    overlay.write_text(yaml.safe_dump({"platforms": [plat], "nics": [nic]}), encoding="utf-8")
    return solver.load_catalog([REPO / "catalogs" / "default.yaml", overlay])


def _scenario(step_time_s: float, platforms: tuple[str, ...] = ("hgx-h100", "hgx-h100-oem")):
    return solver.load_scenario(dict(
        name="platform-copies", workload=dict(model=GPT3_1_3B, global_batch_size=512),
        target=dict(step_time_s=step_time_s),
        constraints=dict(platforms=list(platforms), rails_per_node=[4, 8],
                         fabrics=["fat-tree", "multi-plane"], nic_configurations="any"),
        parallelism=dict(tp=[1, 2, 4], cp=1, pp=[1, 2], vp=1, microbatch_size=[1, 2])))


@pytest.mark.parametrize("price_factor", [0.95, 1.05])  # scanned before the original (cheaper per FLOP/s), and after
def test_each_platform_keeps_the_points_it_keeps_alone(tmp_path, price_factor):
    """Without a cost bound (no K): the shapes of each platform are those of a build of that platform alone (where no
    scan is shared). They are not each other's: the segment bounds at which a multi-plane design is first offered
    (`build._offer_thresholds`) depend on prices."""
    cat = _copy_catalog(tmp_path, price_factor)
    both = build_design_space(_scenario(1.0).scenario, cat, "dominated").shapes
    for platform in ("hgx-h100", "hgx-h100-oem"):
        alone = build_design_space(_scenario(1.0, (platform,)).scenario, cat, "dominated").shapes
        assert alone, "the space must hold shapes for the check to mean anything"
        assert _points(both, platform) == _points(alone, platform)


def _points(shapes, platform: str) -> dict:
    return {(s.perf, s.layout_shape, s.gpus_per_domain_used): (s.d_values, s.domains, s.step_time_s)
            for s in shapes if s.perf.platform == platform}


@pytest.mark.parametrize("price_factor, step_time_s", [(0.95, 0.5), (1.05, 1.0), (1.05, 2.0)])
def test_k_best_with_a_copy_equal_enumeration(tmp_path, price_factor, step_time_s):
    cat = _copy_catalog(tmp_path, price_factor)
    ls = _scenario(step_time_s)
    expected = oracle.best_distinct(enumerated_designs(ls.scenario, cat), 5)
    assert {d.architecture.platform for d in expected} == {"hgx-h100", "hgx-h100-oem"}, "both must rank"
    result = solver.solve(ls, cat, top_k=5)
    assert [d.identity for d in result.designs] == [d.identity for d in expected]
    assert [round(d.objective_usd, 2) for d in result.designs] == [round(d.objective_usd, 2) for d in expected]


@pytest.mark.parametrize("name", ["llama3-405b", "frontier-100k"])
def test_the_probes_change_what_is_cut_not_the_answer(name, default_catalog, monkeypatch):
    """A build with a cost bound scans each platform's PROBES cheapest-looking layouts before the rest
    (`build._scan_platforms`): the order changes only what the bound cuts, so the ranked designs (identities, costs,
    layouts) are those of a build without probes (PROBES = 0: every platform scanned whole in turn, as before)."""
    from solver.design_space import build

    ls = solver.load_scenario(REPO / "scenarios" / f"{name}.yaml")
    with_probes = solver.solve(ls, default_catalog, top_k=5)
    monkeypatch.setattr(build, "PROBES", 0)
    without = solver.solve(solver.load_scenario(REPO / "scenarios" / f"{name}.yaml"), default_catalog, top_k=5)
    assert [d.identity for d in with_probes.designs] == [d.identity for d in without.designs]
    assert [round(d.objective_usd, 2) for d in with_probes.designs] == [round(d.objective_usd, 2) for d in without.designs]
    assert [d.layout for d in with_probes.designs] == [d.layout for d in without.designs]
