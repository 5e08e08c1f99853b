"""A serving fleet on a power-first site (SPEC §6.3, §4.9; issue 43s): the `site:` block of a
`workload.kind: inference` scenario, solved by optimize/site.py's variants with the fleet's MILP.

Each variant (cooling c, GPU g at power profile π, sustained fraction s; optimize/site.py `variants`) is a plain
serving scenario and catalog: the platforms of g whose unit fits c.rack_kw_max, the unit kW at π, g's compute peaks
· π.relative_throughput, racks of at most c.rack_kw_max, c.racks_max, PUE c.pue, a cooling site line, and the cap

    Σ_pools nameplate IT kW · PUE ≤ site MW · 1,000 / (peak_to_average · s)      (the fleet MILP's power row)

so the provisioned power s · IT kW · PUE · peak_to_average stays within the site's MW. The fleet MILP
(serving_solve.solve_fleet) solves each variant; the best is kept (cheapest for capex/tco; for `fastest` the
lowest TPOT, then the cheapest). A fleet's pools share the variant's cooling, GPU and power profile (two
platforms of one GPU may serve prefill and decode); a fleet mixing GPUs is outside a site's answers.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..errors import UsageError
from .site import SiteKind, site_result

SERVING = SiteKind(
    "tpot_p90_s", lambda d: d.tpot_s,
    lambda d, objective: d.tco_usd if objective == "tco" else d.capex_usd,
    lambda d: d.gpus, lambda d: d.power_kw, lambda d: d.back.option.machine.platform,
    lambda d: d.peak_rps * d.output_tokens)
"""A fleet's speed is its decode TPOT p90, its tokens/s the output tokens/s it serves at the peak."""

SUSTAINED_FLAG = ("site: the sustained power fraction ({s:.0%} of nameplate) is the catalog's training measurement; "
                  "no public measurement of a serving fleet's average draw is in the catalog, so the provisioned MW "
                  "of a serving fleet is an estimate")
PROFILE_FLAG = ("site: the power profile's relative_throughput ({k:g}) is a training measurement, applied to the GPU's "
                "compute peaks (HBM bandwidth kept); no public serving measurement at a lowered power limit")


def site_flags(answer) -> list[str]:
    """What the site's answer rests on that no serving measurement backs (every output carries these)."""
    v = answer.variant
    if v is None:
        return []
    out = [SUSTAINED_FLAG.format(s=v.sustained)] if v.sustained < 1 else []
    if v.profile is not None:
        out.append(PROFILE_FLAG.format(k=v.profile.relative_throughput))
    return out


def solve_fleet_on_site(ls, cat, top_k: int | None, frontier_points: int | None, distinct_by: str, *,
                        solve_fn: Callable[..., Any]):
    """The best fleet of every site variant, the best kept; the winner's K best (a FleetResult with `site`)."""
    if frontier_points:
        raise UsageError("--frontier on a serving scenario with `site:` is not supported yet: solve without --frontier "
                         "(the site's variants are compared at their best fleet), or leave `site:` out")

    def solve(loaded, catalog, top_k=None):
        return solve_fn(loaded, catalog, top_k=top_k, distinct_by=distinct_by)

    answer, result, _ = site_result(ls, cat, top_k, solve_fn=solve, kind=SERVING)
    flags = site_flags(answer)
    result = dataclasses.replace(result, site={**answer.to_dict(), "flags": flags})
    result.notes = [*result.notes, *flags]
    return result
