"""Power-first sites (SPEC §6.3, issue 43): the cooling type and the GPU power profile as decisions
within a site's megawatts.

A scenario's `site:` (inputs/site_schema.py) splits the design space into variants, one per cooling type
c and GPU power profile π (the GPU's rated power, or a catalog `power_profiles:` entry of that GPU). In
variant (c, π) of GPU g:

    platforms     those of g the scenario allows whose unit (node or rack) draws ≤ c.rack_kw_max
    unit kW       unit_power_kw − GPUs per unit · (tdp_w − π.gpu_w) / 1,000          (π lowers the GPU limit)
    peak TFLOP/s  g's dense BF16 and FP8 peaks · π.relative_throughput               (clock-bound math slows;
                                                                                      HBM and links do not)
    rack kW       min(rack usable_kw, c.rack_kw_max)               (racks and PDUs: the nameplate unit kW)
    PUE           c.pue                            (facility kW = IT kW · PUE, at nameplate)
    sustained     s = the platform's sustained_power_fraction (average training draw ÷ nameplate; 1 if unstated)
    power cap     s · facility kW ≤ site MW · 1,000 / peak_to_average   (provisioned = sustained · headroom)
    racks         compute + network racks ≤ c.racks_max                 (the halls of that cooling; if given)
    cooling capex c.capex_usd_per_kw · unit kW per compute unit (a `cooling` site line of the BOM)

Variants are split further by s, so s is one number per variant and the cap stays linear (the MILP's cap on
nameplate facility kW becomes site MW · 1,000 / (peak_to_average · s)).
Every design of the scenario belongs to exactly one variant, so solving each variant with the MILP
(`optimize.solve`) and keeping the best answer — the cheapest (objective capex or tco) or the fastest, then
the cheapest (objective fastest) — is exact: tests/optimize/test_site.py checks it against the enumeration
of every variant's designs. The report adds throughput per provisioned MW (tokens/s ÷ site MW) and the
planner's rule of thumb beside it: site MW ÷ all-in kW per GPU (unit kW ÷ GPUs per unit · PUE · headroom).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..costing import nodes_per_unit
from ..errors import InputError
from ..inputs.schema import Catalog, Scenario
from ..inputs.site_schema import CoolingOption, PowerProfile, Site


@dataclass(frozen=True)
class SiteKind:
    """What the site reads of a workload's best answer (training: a design; serving: a fleet,
    optimize/serving_site.py): its speed (lower is faster; JSON field `speed_field`), its cost for the objective,
    GPUs, nameplate facility kW, the platform the rule of thumb uses, and tokens/s."""

    speed_field: str
    speed: Callable[[Any], float]
    cost: Callable[[Any, str], float]
    gpus: Callable[[Any], int]
    nameplate_kw: Callable[[Any], float]
    platform: Callable[[Any], str]
    tokens_per_s: Callable[[Any], float | None]


TRAINING = SiteKind(
    "step_time_s", lambda d: d.perf.step_time_s,
    lambda d, objective: d.cost.tco_usd if objective in ("tco", "rent_or_buy") else d.cost.capex_usd,
    lambda d: d.cost.gpus, lambda d: d.cost.facility_power_kw, lambda d: d.cost.platform,
    lambda d: d.tokens_per_step / d.perf.step_time_s if d.tokens_per_step else None)


@dataclass(frozen=True)
class Variant:
    """One cooling type and one GPU power profile (None: rated power), with its scenario and catalog."""

    cooling: CoolingOption
    gpu: str
    profile: PowerProfile | None
    scenario: Scenario
    catalog: Catalog
    sustained: float = 1.0  # the variant's platforms' sustained_power_fraction

    @property
    def label(self) -> str:
        watts = f"{self.profile.gpu_w:g} W" if self.profile else "rated power"
        drawn = f", drawing {self.sustained:.0%} of nameplate" if self.sustained < 1 else ""
        return f"{self.cooling.type} cooling, {self.gpu} at {watts}{drawn}"


def sustained_fraction(platform) -> float:
    """Average draw of a unit in sustained training ÷ its nameplate unit_power_kw (catalog; 1 when unstated)."""
    f = getattr(platform, "sustained_power_fraction", None)
    return 1.0 if f is None else float(f)


def unit_kw(platform, gpu, profile: PowerProfile | None) -> float:
    """A compute unit's IT power with the profile's GPU limit."""
    if profile is None:
        return platform.unit_power_kw
    gpus = platform.gpus_per_node * nodes_per_unit(platform)
    return platform.unit_power_kw - gpus * (gpu.tdp_w - profile.gpu_w) / 1000.0


def facility_kw_per_unit(platform, gpu, profile: PowerProfile | None, cooling: CoolingOption, site: Site) -> float:
    """Provisioned facility kW of one compute unit (the planners' all-in number):
    unit kW · sustained_power_fraction · PUE · peak_to_average."""
    return unit_kw(platform, gpu, profile) * sustained_fraction(platform) * cooling.pue * site.peak_to_average


def nameplate_facility_kw_per_unit(platform, gpu, profile: PowerProfile | None, cooling: CoolingOption) -> float:
    """Facility kW of one compute unit at its nameplate (what its racks and PDUs are sized for): unit kW · PUE."""
    return unit_kw(platform, gpu, profile) * cooling.pue


def _catalog(catalog: Catalog, gpu_id: str, profile: PowerProfile | None, cooling: CoolingOption,
             platforms: list) -> Catalog:
    """The catalog of one variant: the profile's unit power and GPU peaks, racks capped at the cooling's kW,
    and one cooling site line per platform when the cooling has a capex."""
    from ..inputs.nic_configs import SiteLine

    gpus = {g.id: g for g in catalog.gpus}
    gpu = gpus[gpu_id]
    update: dict = {}
    if profile is not None:
        k = profile.relative_throughput
        gpus[gpu_id] = gpu.model_copy(update={"dense_tflops": {p: v * k for p, v in gpu.dense_tflops.items()}})
        update["gpus"] = list(gpus.values())
    update["platforms"] = [p.model_copy(update={"unit_power_kw": unit_kw(p, gpu, profile)}) if p.gpu == gpu_id else p
                           for p in catalog.platforms]
    update["racks"] = [r.model_copy(update={"usable_kw": min(r.usable_kw, cooling.rack_kw_max)}) for r in catalog.racks]
    if cooling.capex_usd_per_kw > 0:
        lines = [SiteLine.model_validate({
            "id": f"site-cooling-{cooling.type}-{p.id}", "name": f"{cooling.type} cooling plant per unit (site)",
            "category": "cooling", "platforms": [p.id], "per": "unit", "per_count": 1,
            "unit_price_usd": cooling.capex_usd_per_kw * unit_kw(p, gpu, profile),
            "price_source": cooling.source, "price_date": "2026", "price_is_estimate": True,
            "source": f"site: {cooling.capex_usd_per_kw:g} USD per IT kW"}) for p in platforms]
        update["site_lines"] = [*catalog.site_lines, *lines]
    out = catalog.model_copy(update=update)
    out._index = {}
    out._provenance = catalog.provenance
    return out


def variants(scenario: Scenario, catalog: Catalog) -> list[Variant]:
    """Every (cooling, GPU, profile) with at least one platform that fits the cooling's racks."""
    site = scenario.site
    assert site is not None
    allowed = scenario.constraints.platforms
    plats = [p for p in catalog.platforms if allowed is None or p.id in allowed]
    gpus = {g.id: g for g in catalog.gpus}
    cap_kw = site.power_mw_at() * 1000.0 / site.peak_to_average
    own_cap = scenario.constraints.facility_power_kw
    out = []
    for cooling in site.cooling:
        for gpu_id in sorted({p.gpu for p in plats}):
            profiles: list[PowerProfile | None] = [None]
            if site.power_profiles:
                profiles += [pr for pr in catalog.power_profiles if pr.gpu == gpu_id]
            for profile in profiles:
                fits = [p for p in plats if p.gpu == gpu_id
                        and unit_kw(p, gpus[gpu_id], profile) <= cooling.rack_kw_max + 1e-9]
                for s in sorted({sustained_fraction(p) for p in fits}):
                    group = [p for p in fits if sustained_fraction(p) == s]
                    out.append(_variant(scenario, catalog, cooling, gpu_id, profile, group, s, cap_kw / s, own_cap))
    return out


def _variant(scenario: Scenario, catalog: Catalog, cooling: CoolingOption, gpu_id: str, profile: PowerProfile | None,
             group: list, s: float, cap_kw: float, own_cap: float | None) -> Variant:
    """One variant: its platforms, the site's cap on nameplate facility kW (MW · 1,000 / (headroom · s)), the
    cooling's halls' racks, PUE."""
    racks = [n for n in (scenario.constraints.max_racks, cooling.racks_max) if n is not None]
    constraints = scenario.constraints.model_copy(update={
        "platforms": [p.id for p in group], "max_racks": min(racks) if racks else None,
        "facility_power_kw": min(cap_kw, own_cap) if own_cap is not None else cap_kw})
    sc = scenario.model_copy(update={"constraints": constraints, "site": None,  # the variant is plain
                                     "tco": scenario.tco.model_copy(update={"pue": cooling.pue})})
    return Variant(cooling, gpu_id, profile, sc, _catalog(catalog, gpu_id, profile, cooling, group), s)


def better(a: tuple, b: tuple | None, objective: str) -> bool:
    """Whether answer a = (step s, cost) beats b: fastest compares the step first, else the cost first."""
    if b is None:
        return True
    key = (lambda t: (round(t[0], 9), round(t[1], 2))) if objective == "fastest" else (lambda t: (round(t[1], 2), round(t[0], 9)))
    return key(a) < key(b)


@dataclass
class SiteAnswer:
    """The best design within the site, its variant, and every variant's best (or why it has none)."""

    site: Site
    power_mw: float
    variant: Variant | None
    result: Any  # the SolveResult of the winning variant (None: no variant has a design)
    tried: list[dict] = field(default_factory=list)
    kind: SiteKind = TRAINING

    @property
    def design(self):
        return self.result.designs[0] if self.result is not None and self.result.designs else None

    def rule_of_thumb_gpus(self) -> int | None:
        """Site MW ÷ all-in kW per GPU for the chosen platform, cooling and profile (what public planners do)."""
        d, v = self.design, self.variant
        if d is None or v is None:
            return None
        plat = v.catalog.by_id("platforms")[self.kind.platform(d)]
        per_gpu = unit_kw(plat, v.catalog.by_id("gpus")[plat.gpu], None) / (plat.gpus_per_node * nodes_per_unit(plat))
        return math.floor(self.power_mw * 1000.0 / (per_gpu * v.sustained * v.cooling.pue * self.site.peak_to_average))

    def to_dict(self) -> dict:
        d = self.design
        out: dict = {"power_mw": self.power_mw, "peak_to_average": self.site.peak_to_average, "variants": self.tried}
        if d is None or self.variant is None:
            return {**out, "status": "infeasible"}
        tokens_s = self.kind.tokens_per_s(d)
        kw, profile = self.kind.nameplate_kw(d), self.variant.profile
        return {**out, "status": "optimal", "cooling": self.variant.cooling.type, "gpu": self.variant.gpu,
                "power_profile": profile.id if profile else None,
                **({"power_profile_gpu_w": profile.gpu_w} if profile else {}),
                "sustained_power_fraction": self.variant.sustained,
                "nameplate_facility_mw": kw / 1000.0,
                "facility_mw": kw * self.variant.sustained / 1000.0,
                "provisioned_mw": kw * self.variant.sustained * self.site.peak_to_average / 1000.0,
                "gpus": self.kind.gpus(d), "tokens_per_s": tokens_s,
                "tokens_per_s_per_provisioned_mw": tokens_s / self.power_mw if tokens_s else None,
                "rule_of_thumb_gpus": self.rule_of_thumb_gpus()}


def solve_site(loaded, catalog: Catalog, top_k: int = 1, say=None, *, solve_fn: Callable[..., Any],
               kind: SiteKind = TRAINING) -> SiteAnswer:
    """Solve every variant with the MILP and keep the best (exact: the variants partition the designs).
    `loaded`: the LoadedScenario (its document locates errors); `solve_fn`: optimize.solve.solve, or the serving
    fleet's solve with `kind` its SiteKind (passed in, so this module does not import the module that calls it)."""
    import dataclasses

    solve = solve_fn
    scenario = loaded.scenario
    site = scenario.site
    assert site is not None
    best, best_key = None, None
    tried: list[dict] = []
    for v in variants(scenario, catalog):
        if say is not None:
            say(f"site: {v.label}…")
        result = solve(dataclasses.replace(loaded, scenario=v.scenario), v.catalog, top_k=top_k)
        if not result.designs:
            tried.append({"variant": v.label, "status": result.status})
            continue
        d = result.designs[0]
        key = (kind.speed(d), kind.cost(d, scenario.objective))
        kw = kind.nameplate_kw(d)
        tried.append({"variant": v.label, "status": result.status, kind.speed_field: key[0], "cost_usd": key[1],
                      "gpus": kind.gpus(d), "facility_kw": kw * v.sustained,
                      "nameplate_facility_kw": kw, "sustained_power_fraction": v.sustained})
        if better(key, best_key, scenario.objective):
            best, best_key = (v, result), key
    return SiteAnswer(site, site.power_mw_at(), best[0] if best else None, best[1] if best else None, tried, kind)


def site_result(loaded, catalog: Catalog, top_k: int | None, say=None, *, solve_fn: Callable[..., Any],
                kind: SiteKind = TRAINING):
    """(SiteAnswer, the winning variant's SolveResult, its catalog) for the command line; with no feasible
    variant, the first variant's infeasible result and its explanation (the site's power named)."""
    import dataclasses

    solve = solve_fn
    answer = solve_site(loaded, catalog, 1, say, solve_fn=solve_fn, kind=kind)  # the best of each variant decides; then the winner's K best
    if answer.result is not None and answer.variant is not None:
        k = top_k or loaded.scenario.top_k
        result = answer.result if k == 1 else solve(dataclasses.replace(loaded, scenario=answer.variant.scenario),
                                                     answer.variant.catalog, top_k=k)
        answer.result = result
        result.notes = [*getattr(result, "notes", []), f"site: {answer.variant.label} chosen of {len(answer.tried)} "
                        "cooling × power-profile variants, each solved exactly (solver/optimize/site.py)"]
        return answer, result, answer.variant.catalog
    first = variants(loaded.scenario, catalog)
    if not first:
        raise InputError([loaded.doc.problem(("site", "cooling"), _no_fit_message(loaded.scenario, catalog))])
    result = solve(dataclasses.replace(loaded, scenario=first[0].scenario), first[0].catalog, top_k=1)
    return answer, result, first[0].catalog


def _no_fit_message(scenario: Scenario, catalog: Catalog) -> str:
    """Why no variant exists: every allowed platform's unit draws more than every cooling's rack_kw_max."""
    allowed = scenario.constraints.platforms
    plats = [p for p in catalog.platforms if allowed is None or p.id in allowed]
    low = min(plats, key=lambda p: p.unit_power_kw, default=None)
    rack = max(c.rack_kw_max for c in scenario.site.cooling) if scenario.site else 0.0
    least = f"; the smallest allowed unit, {low.id}'s, draws {low.unit_power_kw:g} kW at rated power" if low else ""
    return (f"no allowed platform's unit fits the cooling options' racks (rack_kw_max at most {rack:g} kW{least}): "
            "raise rack_kw_max or allow a platform with smaller units")
