"""What the scale-up domain bought (issue 46, solver/optimize/scaleup_value.py): #1 against the best-ranked design
on another scale-up path, priced as Δ step time and Δ money. Stand-in designs with round numbers (only the fields the
note reads), platforms from the shipped catalog."""
from __future__ import annotations

from types import SimpleNamespace

from solver.optimize.scaleup_value import scaleup_note


def _design(platform: str, gpu: str, rank: int, step_s: float, capex: float, objective: str = "capex"):
    return SimpleNamespace(architecture=SimpleNamespace(platform=platform), gpu=gpu, rank=rank, objective=objective,
                           perf=SimpleNamespace(step_time_s=step_s), cost=SimpleNamespace(capex_usd=capex, tco_usd=2 * capex))


def test_nvl72_over_pcie_is_priced_by_hand(default_catalog):
    # #1 PCIe at 1.60 s and $1.00M; #2 NVL72 at 1.00 s and $1.55M: 1.00/1.60 − 1 = −37.5 % → −38 %; +55 % capex
    result = SimpleNamespace(designs=[_design("pcie-l40s-8", "l40s", 1, 1.60, 1.0e6),
                                      _design("gb200-nvl72", "gb200", 2, 1.00, 1.55e6)])
    note = scaleup_note(default_catalog, result)
    assert note.startswith("what the scale-up domain bought: NVLink domain of 72 GPUs (gb200-nvl72, #2) over PCIe "
                           "domain of 8 GPUs (pcie-l40s-8, #1): −38 % step time at +55 % capex")
    assert "the GPUs differ too, gb200 against l40s" in note


def test_same_gpu_bridge_against_pcie_uses_tco_when_the_objective_is_tco(default_catalog):
    # the same H200 NVL with a 4-way bridge (#1, 2.0 s, TCO $2.2M) against no bridge (#2, 2.5 s, TCO $2.0M):
    # 2.0/2.5 − 1 = −20 %; 2.2/2.0 − 1 = +10 % TCO; same GPU, so no qualifier
    result = SimpleNamespace(designs=[_design("h200-nvl-bridge4", "h200-nvl", 1, 2.0, 1.1e6, "tco"),
                                      _design("pcie-h200-nvl-8", "h200-nvl", 2, 2.5, 1.0e6, "tco")])
    assert scaleup_note(default_catalog, result) == (
        "what the scale-up domain bought: NVLink domain of 4 GPUs (h200-nvl-bridge4, #1) over PCIe domain of 8 GPUs "
        "(pcie-h200-nvl-8, #2): −20 % step time at +10 % TCO")


def test_no_note_when_every_design_shares_the_scale_up_path(default_catalog):
    result = SimpleNamespace(designs=[_design("hgx-h100", "h100-sxm", 1, 1.0, 1e6), _design("dgx-h100", "h100-sxm", 2, 1.0, 2e6)])
    assert scaleup_note(default_catalog, result) is None
