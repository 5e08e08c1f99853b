"""catalogs/h800.yaml: the H800 overlay (DeepSeek's fleet hardware). Same die, HBM and price estimate as the H100
server, NVLink 200 GB/s per direction instead of 450: a serving fleet on H800 never needs fewer GPUs nor costs less
than the same fleet on H100, and it carries the same site lines."""
from __future__ import annotations

from pathlib import Path

from solver.inputs import layered_paths, load_catalog
from solver.optimize.serving_solve import solve_fleet

from .fleet_scenarios import scenario

REPO = Path(__file__).resolve().parents[2]


def test_overlay_adds_the_h800_server():
    cat = load_catalog(layered_paths([REPO / "catalogs" / "h800.yaml"], True))
    h800, h100 = cat.by_id("platforms")["hgx-h800"], cat.by_id("platforms")["hgx-h100"]
    assert h800.nvlink_gbyte_s == 200 and h100.nvlink_gbyte_s == 450
    assert h800.unit_price_usd == h100.unit_price_usd and h800.price_is_estimate
    gpus = cat.by_id("gpus")
    assert gpus["h800-sxm"].hbm_tbyte_s == gpus["h100-sxm"].hbm_tbyte_s


def test_h800_fleet_is_no_cheaper_than_h100_and_has_site_lines():
    cat = load_catalog(layered_paths([REPO / "catalogs" / "h800.yaml"], True))
    best = {}
    for plat in ("hgx-h100", "hgx-h800"):
        r = solve_fleet(scenario(**{"constraints.platforms": [plat], "serving.disaggregation": "off",
                                    "parallelism.tp": [2, 4, 8]}), cat, top_k=1)
        best[plat] = r.designs[0]
    assert best["hgx-h800"].gpus >= best["hgx-h100"].gpus
    assert best["hgx-h800"].capex_usd >= best["hgx-h100"].capex_usd
    categories = {line.category for p in best["hgx-h800"].pools for line in p.cost.bom}
    assert {"storage", "management", "installation"} <= categories
