"""Hot spares packed into the job's fabric (SPEC §5.3): a pinned node count is the count cabled for the job, and
spare units take the free ports of its leaf groups (its scalable units) where they exist, instead of a new leaf
group for two spare nodes.

    F          = family.size(N_job, tiers)                       the fabric of the job's nodes
    cabled(S)  = the largest s ≤ S with family.size(N_job + s·n_u, F.tiers).switches = F.switches
    links      = family.size(N_job + cabled·n_u, F.tiers).links   (the cabled spares' node links included)

for S spare units of n_u nodes each. The other S − cabled spare units are bought (racked, powered, idle) but
not cabled to the compute fabric, and every output says so. The switch counts stay the job's, so a 31-node
DGX H100 scalable unit with its spares is the reference's 8 leaves and 4 spines (docs/sources.md [O1] Table 4).
A pure function of a family, a spec and counts, so any fleet (training or serving) sizes its spares with it.
"""
from __future__ import annotations

from functools import lru_cache

from .base import FabricSize, FabricSpec


def pack_spares(family_name: str, spec: FabricSpec, job_nodes: int, spare_units: int, nodes_per_unit: int,
                tiers: int | None = None) -> tuple[FabricSize | None, int]:
    """(the fabric with the cabled spares' links, cabled spare units); (None, 0) when the job's nodes do not fit
    (module docstring). Memoised: the design space and the model ask it for the same few counts many times."""
    return _pack(family_name, spec, job_nodes, spare_units, nodes_per_unit, tiers)


@lru_cache(maxsize=1 << 16)
def _pack(family_name: str, spec: FabricSpec, job_nodes: int, spare_units: int, nodes_per_unit: int,
          tiers: int | None) -> tuple[FabricSize | None, int]:
    from . import family

    fam = family(family_name)
    base = fam.size(job_nodes, spec, tiers)
    if base is None:
        return None, 0
    lo, hi = 0, spare_units  # switch counts never fall as nodes grow: the same switches hold every s up to the largest
    while lo < hi:
        mid = (lo + hi + 1) // 2
        grown = fam.size(job_nodes + mid * nodes_per_unit, spec, base.tiers)
        if grown is not None and grown.switches == base.switches:
            lo = mid
        else:
            hi = mid - 1
    return (fam.size(job_nodes + lo * nodes_per_unit, spec, base.tiers) if lo else base), lo
