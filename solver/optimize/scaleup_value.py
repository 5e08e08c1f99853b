"""What the scale-up domain bought (issue 46): the answer's explanation compares #1 with the best-ranked design on
another scale-up path (NVLink against PCIe or Infinity Fabric, or a larger NVLink domain against a smaller one).

The two designs meet the same target, so the note prices the difference a buyer sees:

    Δstep  = T_A / T_B − 1        Δmoney = C_A / C_B − 1

where A is the design with the stronger scale-up path (`strength`: NVLink before Infinity Fabric before PCIe, then
the larger domain, then the faster per-GPU path) and C is the objective's money (capex, or TCO when the objective
is TCO). E.g. "NVLink domain of 72 GPUs (gb200-nvl72, #1) over PCIe domain of 8 GPUs (pcie-l40s-8, #3): −38 % step
time at +55 % capex"; when the two designs' GPUs differ the note says so (the difference is not the domain alone).
No note when every ranked design shares one scale-up path.
"""
from __future__ import annotations

from ..inputs.schema import Catalog
from ..results import Design, SolveResult

FABRIC_ORDER = {"pcie": 0, "infinity_fabric": 1, "nvlink": 2}
FABRIC_TEXT = {"pcie": "PCIe", "infinity_fabric": "Infinity Fabric", "nvlink": "NVLink"}


def scaleup_kind(catalog: Catalog, design: Design) -> tuple[str, int]:
    """(scale-up fabric, GPUs per domain) of a design's platform."""
    plat = catalog.by_id("platforms")[design.architecture.platform]
    return plat.scaleup_fabric, plat.gpus_per_domain


def strength(catalog: Catalog, design: Design) -> tuple[int, int, float]:
    """How strong a design's scale-up path is: fabric rank, domain size, effective GB/s per GPU."""
    plat = catalog.by_id("platforms")[design.architecture.platform]
    return FABRIC_ORDER[plat.scaleup_fabric], plat.gpus_per_domain, plat.nvlink_gbyte_s * plat.nvlink_efficiency


def _money(design: Design) -> tuple[float, str]:
    if design.objective in ("tco", "rent_or_buy"):
        return design.cost.tco_usd, "TCO"
    return design.cost.capex_usd, "capex"


def scaleup_delta(catalog: Catalog, a: Design, b: Design) -> tuple[float, float, str]:
    """(Δstep, Δmoney, money name) of design `a` against design `b` (fractions)."""
    money_a, name = _money(a)
    money_b, _ = _money(b)
    return a.perf.step_time_s / b.perf.step_time_s - 1, money_a / money_b - 1, name


def _describe(catalog: Catalog, design: Design) -> str:
    fabric, gpus = scaleup_kind(catalog, design)
    return f"{FABRIC_TEXT[fabric]} domain of {gpus} GPUs ({design.architecture.platform}, #{design.rank})"


def scaleup_note(catalog: Catalog, result: SolveResult) -> str | None:
    """The note for a ranked answer whose designs use more than one scale-up path, else None."""
    designs = result.designs
    if len(designs) < 2:
        return None
    first = designs[0]
    other = next((d for d in designs[1:] if scaleup_kind(catalog, d) != scaleup_kind(catalog, first)), None)
    if other is None:
        return None
    strong, weak = (first, other) if strength(catalog, first) >= strength(catalog, other) else (other, first)
    d_step, d_money, name = scaleup_delta(catalog, strong, weak)
    text = (f"what the scale-up domain bought: {_describe(catalog, strong)} over {_describe(catalog, weak)}: "
            f"{percent_text(d_step)} step time at {percent_text(d_money)} {name}")
    if strong.gpu != weak.gpu:
        text += f" (the GPUs differ too, {strong.gpu} against {weak.gpu}: not the domain alone)"
    return text


def percent_text(x: float) -> str:
    """+55 % or −38 % (a true minus sign, as the issue writes it)."""
    return f"{'−' if x < 0 else '+'}{abs(x):.0%}".replace("%", " %")
