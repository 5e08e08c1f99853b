"""What the scale-up domain bought, for serving fleets (issue 46; the training answer's note is
solver/optimize/scaleup_value.py). The fleet report compares #1 with the best fleet whose TPOT-setting pool (decode,
or aggregated) sits on another scale-up path — NVLink against PCIe or Infinity Fabric, or a larger NVLink domain
against a smaller one — from the ranked fleets, else from one more MILP solve on the candidates of the other paths:

    ΔTPOT  = TPOT_A / TPOT_B − 1        Δmoney = C_A / C_B − 1

A is the fleet with the stronger path (scaleup_value.strength's order: NVLink, Infinity Fabric, PCIe, then the
larger domain, then the faster path per GPU), C the objective's money (capex; TCO when the objective is TCO). Both
fleets meet the same traffic and SLOs, so the note prices what the faster decode cost: e.g. "NVLink domain of 72 GPUs
(gb200-nvl72, #1) over PCIe domain of 8 GPUs (pcie-l40s-8, best fleet on that path): −38 % TPOT at +55 % capex".
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .scaleup_value import FABRIC_ORDER, FABRIC_TEXT, percent_text


def _platform(catalog: Any, platform_id: str) -> Any:
    return catalog.by_id("platforms")[platform_id]


def fleet_path(catalog: Any, fleet: Any) -> tuple[str, int]:
    """(scale-up fabric, GPUs per domain) of the fleet's decode (or aggregated) pool's platform."""
    plat = _platform(catalog, fleet.back.option.machine.platform)
    return plat.scaleup_fabric, plat.gpus_per_domain


def fleet_strength(catalog: Any, fleet: Any) -> tuple[int, int, float]:
    plat = _platform(catalog, fleet.back.option.machine.platform)
    return FABRIC_ORDER[plat.scaleup_fabric], plat.gpus_per_domain, plat.nvlink_gbyte_s * plat.nvlink_efficiency


def _money(fleet: Any) -> tuple[float, str]:
    return (fleet.tco_usd, "TCO") if fleet.objective == "tco" else (fleet.capex_usd, "capex")


def best_on_other_path(catalog: Any, space: Any, fleets: list[Any],
                       best_of: Callable[[Any], list[Any]]) -> Any | None:
    """The best-ranked fleet on another path than #1's, else the best fleet `best_of` (the fleet MILP, K = 1) finds
    among the candidates whose platform is on another path (rank 0: not in the ranking), else None."""
    path = fleet_path(catalog, fleets[0])
    ranked = next((f for f in fleets[1:] if fleet_path(catalog, f) != path), None)
    if ranked is not None:
        return ranked
    others = [o for o in space.options
              if (_platform(catalog, o.machine.platform).scaleup_fabric,
                  _platform(catalog, o.machine.platform).gpus_per_domain) != path]
    opts = [replace(o, index=i) for i, o in enumerate(others)]  # the MILP indexes options by position
    if not opts:
        return None
    found = best_of(replace(space, options=opts))
    if not found:
        return None
    found[0].rank = 0
    return found[0]


def _describe(catalog: Any, fleet: Any) -> str:
    fabric, gpus = fleet_path(catalog, fleet)
    where = f"#{fleet.rank}" if fleet.rank else "best fleet on that path"
    return f"{FABRIC_TEXT[fabric]} domain of {gpus} GPUs ({fleet.back.option.machine.platform}, {where})"


def serving_scaleup_note(sc: Any, catalog: Any, space: Any, fleets: list[Any],
                         best_of: Callable[[Any], list[Any]]) -> str | None:
    """The note for a serving answer whose candidates span more than one scale-up path, else None."""
    if not fleets or sc.objective == "fastest":
        return None
    other = best_on_other_path(catalog, space, fleets, best_of)
    if other is None:
        return None
    first = fleets[0]
    strong, weak = (first, other) if fleet_strength(catalog, first) >= fleet_strength(catalog, other) else (other, first)
    money_s, name = _money(strong)
    money_w, _ = _money(weak)
    text = (f"what the scale-up domain bought: {_describe(catalog, strong)} over {_describe(catalog, weak)}: "
            f"{percent_text(strong.tpot_s / weak.tpot_s - 1)} TPOT at {percent_text(money_s / money_w - 1)} {name}")
    gpu_s = _platform(catalog, strong.back.option.machine.platform).gpu
    gpu_w = _platform(catalog, weak.back.option.machine.platform).gpu
    if gpu_s != gpu_w:
        text += f" (the GPUs differ too, {gpu_s} against {gpu_w}: not the domain alone)"
    return text
