"""Which published architecture a design follows (SPEC §5.3), and the caveats of the fabric it is built on.

`reference_design` names the reference a sized design follows, or "none" with the reason:

- a non-blocking rail-optimised fat tree of 2 or 3 tiers on the reference NIC configuration and the
  switch of the platform's DGX SuperPOD reference architecture follows that RA, ⌈nodes / SU nodes⌉
  scalable units (H100/H200 and B200: 32-node SU, docs/sources.md [O1][O2]; B300 XDR: 72-node SU [O2];
  GB200/GB300 NVL72: 8 racks = 144 trays [O3]; A100: 20-node SU); on Spectrum-X Ethernet switches it
  follows NVIDIA's Spectrum-X reference architecture (no scalable-unit count);
- a multi-plane fat tree on InfiniBand follows DeepSeek's deployed 8-plane, 2-tier fabric ([F1]); on
  Ethernet, NVIDIA's Spectrum-X multiplane (which splits a SuperNIC over its planes; here one NIC per plane);
- a rail-only fabric, an oversubscribed tier, a single switch, a switch or NIC configuration the
  reference does not use: "none".

`fabric_caveats` are the lines every output carries with the design (the design's caveat list): the
multi-plane cross-plane (PXN) caveat with its reference, and a "none" reference stated as such.
Pure functions of identifiers and counts, so any fleet (training or serving) can ask them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

NONE = "none"


@dataclass(frozen=True)
class Reference:
    """One published reference architecture: its name, the switch it is built on, nodes per scalable unit."""

    name: str
    switch: str
    su_nodes: int
    unit: str = "SU"


# platform id → its DGX SuperPOD reference architecture (docs/sources.md [O1][O2][O3])
SUPERPOD: dict[str, Reference] = {
    "dgx-a100": Reference("DGX SuperPOD A100 RA", "qm8700", 20),
    "hgx-h100": Reference("DGX SuperPOD H100 RA (RA-11333-001)", "qm9700", 32),
    "dgx-h100": Reference("DGX SuperPOD H100 RA (RA-11333-001)", "qm9700", 32),
    "hgx-h200": Reference("DGX SuperPOD H100/H200 RA (32-node SU)", "qm9700", 32),
    "dgx-b200": Reference("DGX SuperPOD B200 RA", "qm9700", 32),
    "hgx-b200": Reference("DGX SuperPOD B200 RA", "qm9700", 32),
    "dgx-b300": Reference("DGX SuperPOD B300 XDR RA", "q3400", 72),
    "gb200-nvl72": Reference("DGX SuperPOD GB200 RA", "qm9700", 144),
    "gb300-nvl72": Reference("DGX SuperPOD GB300 RA", "q3400", 144),
}
SPECTRUM_X = "NVIDIA Spectrum-X Ethernet RA (rail-optimised)"
DEEPSEEK = "DeepSeek's deployed 8-plane InfiniBand fabric (2 tiers, [F1])"
SPECTRUM_X_MULTIPLANE = "NVIDIA Spectrum-X multiplane (RA 2.x: a SuperNIC split over planes)"


@dataclass(frozen=True)
class FabricFacts:
    """What the reference of a design depends on: platform, fabric family, switch and its Ethernet-ness, tiers,
    node count, oversubscription (leaf and above the pods), whether the NIC configuration is the reference one."""

    platform: str
    family: str
    switch: str
    ethernet: bool
    tiers: int
    nodes: int
    oversubscription: float = 1.0
    above_pod_oversubscription: float = 1.0
    reference_nics: bool = True


def _why_not(f: FabricFacts) -> str | None:
    """The reason no reference applies, or None."""
    if not f.reference_nics:
        return "not the reference NIC configuration"
    if f.family == "rail-only":
        return "rail-only: no deployment keeps no spine"
    if f.oversubscription > 1 + 1e-9 or f.above_pod_oversubscription > 1 + 1e-9:
        return "an oversubscribed tier; the references are non-blocking"
    if f.family == "fat-tree" and f.tiers == 1:
        return "one switch, below a scalable unit"
    return None


def reference_design(f: FabricFacts) -> str:
    """The published architecture the design follows, or "none (reason)" (module docstring)."""
    why = _why_not(f)
    if why is not None:
        return f"{NONE} ({why})"
    if f.family == "multi-plane":
        return SPECTRUM_X_MULTIPLANE if f.ethernet else DEEPSEEK
    if f.ethernet:
        return SPECTRUM_X
    ref = SUPERPOD.get(f.platform)
    if ref is None or ref.switch != f.switch:
        return f"{NONE} (no reference architecture builds {f.platform} on {f.switch})"
    return f"{ref.name}, {math.ceil(f.nodes / ref.su_nodes)} {ref.unit}"


def is_none(reference: str) -> bool:
    return reference.startswith(NONE)


def multi_plane_caveat(reference: str) -> str:
    """The cross-plane caveat of a multi-plane design, with the deployment it follows."""
    return (f"multi-plane, as {reference}: no switch joins two planes; cross-plane traffic goes through NVLink "
            "first (NCCL PXN), as the step time models")


def fabric_caveats(f: FabricFacts, reference: str) -> list[str]:
    """The caveats of the design's fabric for its caveat list: multi-plane's PXN caveat; a "none" reference."""
    out = []
    if f.family == "multi-plane":
        out.append(multi_plane_caveat(reference))
    if is_none(reference) and f.family != "rail-only":  # rail-only carries its own family caveat
        out.append(f"reference design: {reference}: an architect must sign the fabric off")
    return out
