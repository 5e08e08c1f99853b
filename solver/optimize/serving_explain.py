"""Why no serving fleet meets the scenario (SPEC §7: which requirement, by how much), read off the fleet space's
rejections and, when candidates survive, off the cheapest fleet without the caps."""
from __future__ import annotations

from ..design_space.serving import FleetSpace
from ..inputs.schema import Scenario


def _per_candidate(sc: Scenario, space: FleetSpace) -> list[str]:
    """The requirements no candidate of a pool role meets (only for a role left with no candidate)."""
    out = []
    rej = space.rejected
    best = rej.best
    roles = {o.role for o in space.options}
    no_decoder = not roles & {"aggregated", "decode"}
    no_prefiller = not roles & {"aggregated", "prefill"}
    cap = sc.constraints.max_gpus
    if no_decoder and "replica_gpus" in best:
        gpus, what = best["replica_gpus"]
        out.append(f"the TPOT target of {space.tpot_max_s * 1000:.1f} ms needs ≥ {gpus:.0f} GPUs per decode replica "
                   f"({what}): max_gpus is {cap:,}")
    elif no_decoder and "tpot_p90" in best:
        tpot, what = best["tpot_p90"]
        out.append(f"the TPOT target of {space.tpot_max_s * 1000:.1f} ms (≥ {1 / space.tpot_max_s:.1f} tokens/s per "
                   f"user) is missed by every allowed replica: the fastest, {what}, decodes at {tpot * 1000:.1f} ms per "
                   f"token ({1 / tpot:.1f} tokens/s per user); allow larger tp/ep or faster GPUs")
    if no_prefiller and "ttft_p90" in best:
        t, what = best["ttft_p90"]
        out.append(f"the TTFT p90 target of {space.ttft_max_s:g} s is missed even with unlimited replicas: the "
                   f"quickest prompt, on {what}, takes {t:.2f} s; allow larger tp or faster GPUs, or relax ttft_p90_s")
    if not space.options and "memory_fit" in best and not out:
        out.append(f"no allowed replica holds the weights and the KV cache of its concurrency ({rej.counts['memory_fit']} "
                   "tried); allow larger tp/pp/ep or lower concurrency")
    if not space.options and "scaleout_fit" in best and not out:
        ratio, what = best["scaleout_fit"]
        out.append(f"every candidate needs more scale-out bandwidth than its NICs carry (the closest, {what}, needs "
                   f"{ratio:.2f}× its NICs)")
    return out


CAP_WORDS = (("max_gpus", "gpus", "the fleet with the fewest GPUs", "needs {v:,.0f} GPUs", "{c:,.0f}"),
             ("budget_usd", "capex", "the cheapest fleet", "costs ${v:,.0f}", "${c:,.0f}"),
             ("facility_power_kw", "power", "the fleet drawing the least power", "draws {v:,.1f} kW", "{c:,.1f} kW"),
             ("max_racks", "racks", "the fleet with the fewest racks", "fills {v:,.0f} racks", "{c:,.0f}"))


def _caps(sc: Scenario, space: FleetSpace) -> list[str]:
    """Per cap: the least any fleet meeting the traffic and the SLOs needs of it (the fleet MILP minimising that
    quantity, without the caps), when that exceeds the cap."""
    import pyomo.core as pyo

    from .serving_model import MUSD, Caps, build_fleet_model, solve_model

    out = []
    for cap_name, attr, which, needs, fmt in CAP_WORDS:
        cap = getattr(sc.constraints, cap_name)
        if cap is None:
            continue
        m = build_fleet_model(space, Caps(), attr)
        if not solve_model(m):
            continue
        least = pyo.value(getattr(m, attr)) / (MUSD if attr == "capex" else 1.0)
        if least > cap * (1 + 1e-9):
            out.append(f"{which} meeting the traffic and the SLOs {needs.format(v=least)}: {cap_name} is "
                       f"{fmt.format(c=cap)}")
    return out


def explain_fleet(sc: Scenario, space: FleetSpace) -> str:
    """One sentence per requirement no fleet meets: a pool role without any candidate, else the caps."""
    lines = _per_candidate(sc, space)
    if not lines and space.options:
        lines = _caps(sc, space)
    if not lines:
        lines.append(f"no candidate pool serves {space.peak_rps:.2f} requests/s within the SLOs on the allowed "
                     "platforms, layouts and pins")
    return "; ".join(lines)
