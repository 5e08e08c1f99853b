"""Why no serving fleet meets the scenario (SPEC §7: which requirement, by how much), read off the fleet space's
rejections and, when candidates survive, off the cheapest fleet without the caps."""
from __future__ import annotations

from ..design_space.serving import FleetSpace
from ..inputs.schema import Scenario


def _per_candidate(sc: Scenario, space: FleetSpace) -> list[str]:
    out = []
    rej = space.rejected
    best = rej.best
    cap = sc.constraints.max_gpus
    if "tpot_p90" in best:
        tpot, what = best["tpot_p90"]
        out.append(f"the TPOT target of {space.tpot_max_s * 1000:.1f} ms (≥ {1 / space.tpot_max_s:.1f} tokens/s per "
                   f"user) is missed by every allowed replica: the fastest, {what}, decodes at {tpot * 1000:.1f} ms per "
                   f"token ({1 / tpot:.1f} tokens/s per user); allow larger tp/ep or faster GPUs"
                   + (f" (max_gpus is {cap:,})" if cap is not None else ""))
    if "ttft_p90" in best:
        t, what = best["ttft_p90"]
        out.append(f"the TTFT p90 target of {space.ttft_max_s:g} s is missed even with unlimited replicas: the "
                   f"quickest prompt, on {what}, takes {t:.2f} s; allow larger tp or faster GPUs, or relax ttft_p90_s")
    if "memory_fit" in best:
        out.append(f"{rej.counts['memory_fit']} candidate replicas do not hold the weights and the KV cache of their "
                   "concurrency; allow larger tp/pp/ep or lower concurrency")
    if "scaleout_fit" in best:
        ratio, what = best["scaleout_fit"]
        out.append(f"{rej.counts['scaleout_fit']} candidates need more scale-out bandwidth than their NICs carry "
                   f"(the closest, {what}, needs {ratio:.2f}× its NICs)")
    return out


def _caps(sc: Scenario, space: FleetSpace) -> list[str]:
    from .serving_model import Caps
    from .serving_solve import k_best_with

    cheapest = k_best_with(sc, space, Caps(), 1)
    if not cheapest:
        return []
    d = cheapest[0]
    c = sc.constraints
    out = []
    if c.max_gpus is not None and d.gpus > c.max_gpus:
        per = max(p.option.gpus_per_replica for p in d.pools)
        out.append(f"the cheapest fleet meeting the traffic and the SLOs needs {d.gpus:,} GPUs ({per} per replica, "
                   f"{' + '.join(f'{p.replicas} {p.role}' for p in d.pools)} replicas): max_gpus is {c.max_gpus:,}")
    if c.budget_usd is not None and d.capex_usd > c.budget_usd:
        out.append(f"the cheapest fleet meeting the traffic and the SLOs costs ${d.capex_usd:,.0f}: budget_usd is "
                   f"${c.budget_usd:,.0f}")
    if c.facility_power_kw is not None and d.power_kw > c.facility_power_kw:
        out.append(f"the cheapest fleet meeting the traffic and the SLOs draws {d.power_kw:,.1f} kW: facility_power_kw "
                   f"is {c.facility_power_kw:,.1f}")
    if c.max_racks is not None and d.racks > c.max_racks:
        out.append(f"the cheapest fleet meeting the traffic and the SLOs fills {d.racks:,} racks: max_racks is "
                   f"{c.max_racks:,}")
    return out


def explain_fleet(sc: Scenario, space: FleetSpace) -> str:
    """One sentence per requirement no fleet meets (the binding ones first)."""
    lines: list[str] = []
    if space.options:
        roles = {o.role for o in space.options}
        missing = [r for mode in space.modes for r in (("aggregated",) if mode == "aggregated" else ("prefill", "decode"))
                   if r not in roles]
        if not missing or set(missing) != {r for mode in space.modes for r in
                                           (("aggregated",) if mode == "aggregated" else ("prefill", "decode"))}:
            lines.extend(_caps(sc, space))
    lines.extend(_per_candidate(sc, space))
    if not lines:
        lines.append(f"no candidate pool serves {space.peak_rps:.2f} requests/s within the SLOs on the allowed "
                     "platforms, layouts and pins")
    return "; ".join(lines)
