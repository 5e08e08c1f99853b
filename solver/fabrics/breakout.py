"""Port breakout (SPEC §5.1): a switch port split into b ports of 1/b the speed, from catalog data.

A switch lists the splits its vendor documents (`breakout: [2]` on the Spectrum-4 SN5600: each
800GbE port as 2 × 400GbE, docs/sources.md [F5]). A NIC of speed s is served by a switch of native
port speed S when S = s (b = 1) or S = b·s for a listed b; the switch then has k·b ports at s:

    radix_in_use = b · radix,   port_speed_in_use = port_speed / b

Sizing (`fabrics`), the optimisation model and the bill of materials all use the radix in use, and
the links are the catalog options made for that split (`Link.breakout = b`: splitter cables, or
twin-port modules with splitter fibres), chosen by `fabrics.links.link_for`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..inputs.schema import Nic, Switch


@dataclass(frozen=True)
class PortMode:
    """How a switch's ports are used: `radix` ports at `speed_gbps`, each a 1/`breakout` split."""

    radix: int
    speed_gbps: float
    breakout: int


def port_mode(switch: Switch, speed_gbps: float) -> PortMode | None:
    """The split b with port_speed / b = speed_gbps (b = 1, or one the catalog lists); None when the
    switch cannot run its ports at that speed."""
    ratio = switch.port_speed_gbps / speed_gbps
    split = round(ratio)
    if split < 1 or not math.isclose(ratio, split, rel_tol=1e-9):
        return None
    if split != 1 and split not in switch.breakout:
        return None
    return PortMode(radix=switch.radix * split, speed_gbps=speed_gbps, breakout=split)


def serves(switch: Switch, nic: Nic) -> PortMode | None:
    """The port mode in which a switch serves a NIC: same fabric, and a port speed (after a listed
    breakout) equal to the NIC's; None when it cannot."""
    if switch.fabric != nic.fabric:
        return None
    return port_mode(switch, nic.speed_gbps)
