"""The cost bound of the dominance scan: a layout's scan stops where no design can be among the K best.

While the design space is built, every kept point is offered to the bound: for each architecture of its
performance class, the point's closed-form cost (`costing.design_cost`, the evaluator's) when the design is
one the model offers and the scenario accepts (fabric built on an allowed tier count, within every cap, not
dominated by the fat tree of the same parts; the scan has already checked memory, the target and every
margin). The best cost per ranking identity is kept; once K identities are known,

    UB_K = the K-th smallest of them          (the K best distinct designs cost ≤ UB_K)

and a point whose cost lower bound (`costing.point_lower_bound_usd`: units, spares and their NICs, with
contingency, owned parts netted, and for TCO their energy; the least over the architectures of its platform,
NIC and rails) is over UB_K cannot be one of them. The lower bound of a layout's points is made
non-decreasing in d by a suffix minimum, so a scan stops at the first point whose suffix minimum is over
UB_K. Exact when the space is ranked for K designs at its own target (`solve`, the next faster design);
the frontier and the plan build without it.
"""
from __future__ import annotations

import math

from .. import costing
from ..errors import CatalogCannotBuild
from ..fabrics.links import facility_of
from ..inputs.schema import Catalog, Scenario
from ..perf.layout import Layout
from .allowlists import allowed_tiers
from .dominance import cost_of, dominated_by_fat_tree
from .identity import Architecture, PerfClass

COST_REL = 1e-9  # relative tolerance on UB_K (with a cent): the bound never cuts a design tied at the K-th cost
CENT_USD = 0.01


class CostBound:
    """UB_K of a build (`limit_usd`), the cost lower bound of its points and the designs that set UB_K."""

    def __init__(self, scenario: Scenario, catalog: Catalog, archs: list[Architecture], k: int,
                 distinct_by: str = "architecture", seed: tuple = (), objective: str | None = None,
                 costed: dict | None = None, costs: dict | None = None, spare_rule=None,
                 lower_bounds: dict | None = None):
        """`seed`: (architecture, layout) of designs the caller knows meet this scenario's memory, target and margins
        (the next faster design: the solve's ranked designs that meet the lowered target); they are costed and
        judged as every offered point is (`offer_design`, with `spare_rule`) here, before the scan. `objective`
        (default the scenario's): "capex" for the budget cut (`budget_cut`). `costed`, `costs`: the build's costed
        designs and this objective's cost cache, both the scan memo's, so the next faster design's build reads the
        solve's (`build_design_space`); new dicts by default. `lower_bounds`: where `arch_lower_bound_usd` keeps its
        values (they read the scenario but for its target, the catalog and the objective; `memo.ScanMemo.budget_bound`
        shares one among the budget cuts of a memo's builds, objective capex); a new dict by default."""
        self.scenario, self.catalog, self.archs = scenario, catalog, archs
        self.k, self.by_platform = k, distinct_by == "platform"
        self.platforms = catalog.by_id("platforms")
        self.of_perf: dict[PerfClass, list[Architecture]] = {}
        self.of_parts: dict[tuple, list[Architecture]] = {}  # (platform, NIC, rails) → architectures
        for a in archs:
            self.of_perf.setdefault(a.perf, []).append(a)
            self.of_parts.setdefault((a.platform, a.nic, a.rails_per_node), []).append(a)
        self.objective = objective or scenario.objective
        pue, usd_per_kwh = costing.pue_and_usd_per_kwh(scenario, facility_of(catalog))
        tco = self.objective in ("tco", "rent_or_buy")
        self.energy = (pue, scenario.tco.years, usd_per_kwh) if tco else None
        self.contingency = scenario.constraints.contingency_fraction
        self.owned = scenario.owned_counts()
        self._parts: dict[Architecture, costing.Parts | None] = {}
        self._lb: dict[tuple, tuple[float, float]] = {}  # (platform, NIC, rails, domains, G_u) → (UB_K, least LB)
        # (architecture, domains, G_u) → the design's cost for the objective, and the build's costed designs
        self.costs: dict[tuple, float] = costs if costs is not None else {}
        self.costed: dict = costed if costed is not None else {}
        # (architecture, domains, G_u) → LB; `lower_bounds`: the scan memo's, shared by its budget cuts' bounds
        self._arch_lb: dict[tuple, float] = lower_bounds if lower_bounds is not None else {}
        self._platform_lb: dict[tuple, tuple[float, float]] = {}  # (platform, domains, G_u) → (UB_K, least LB)
        self._cuts: dict[tuple, tuple[float, int]] = {}  # (platform, NIC, rails, G_u, domain counts) → (limit, cut)
        self._platform_over: dict[tuple, tuple[float, bool]] = {}  # (platform, domain counts, G_u) → (UB_K, over)
        self._tiers: dict[Architecture, tuple[int, ...]] = {}
        self._dominated: dict[tuple, bool] = {}  # (architecture, domains, G_u) → `dominated_by_fat_tree`
        self.best: dict[tuple, tuple[float, Architecture, Layout]] = {}  # ranking identity → (cost, architecture, layout)
        self.limit_usd = math.inf  # UB_K with its tolerance; inf until K identities are known
        self.offered = 0  # (point, architecture) pairs costed for the bound
        self.seed = tuple(seed)
        for arch, layout in self.seed:
            self.offer_design(arch, layout, spare_rule, self.costed)

    # ------------------------------------------------------------------ the lower bound

    def parts(self, a: Architecture) -> costing.Parts | None:
        if a not in self._parts:
            cat = self.catalog
            try:
                self._parts[a] = costing.parts_for(cat, self.platforms[a.platform], cat.by_id("nics")[a.nic],
                                                   cat.by_id("switches")[a.switch], a.rails_per_node,
                                                   tuple(self.scenario.extra_costs), self.scenario.capex_scope)
            except CatalogCannotBuild:
                self._parts[a] = None  # never built: no design of it exists
        return self._parts[a]

    def arch_lower_bound_usd(self, a: Architecture, domains: int, spare_rule, g_used: int | None) -> float:
        """LB of one architecture's point on `domains` domains (`costing.point_lower_bound_usd`); inf when the
        catalog cannot build the architecture."""
        key = (a, domains, g_used)
        if key not in self._arch_lb:
            parts = self.parts(a)
            if parts is None:
                self._arch_lb[key] = math.inf
            else:
                plat = self.platforms[a.platform]
                units = costing.compute_units(plat, domains)
                spares = costing.spare_units_for(plat, domains, spare_rule, g_used)
                nodes = (units + spares) * costing.nodes_per_unit(plat)
                self._arch_lb[key] = costing.point_lower_bound_usd(parts, units, spares, nodes, self.contingency,
                                                                   self.owned, self.energy)
        return self._arch_lb[key]

    def lower_bound_usd(self, perf: PerfClass, domains: int, spare_rule, g_used: int | None) -> float:
        """The least LB over every architecture of the class's platform, NIC and rails (every class a shape of
        this class may be shared with, `structures.share_plain_shapes`)."""
        return self._parts_lower_bound_usd((perf.platform, perf.nic, perf.rails_per_node), domains, spare_rule, g_used)

    def _parts_lower_bound_usd(self, parts: tuple, domains: int, spare_rule, g_used: int | None) -> float:
        """The least `point_bound_usd` over the architectures of one platform, NIC and rails (cached while UB_K
        stays the same: which architectures are costed exactly depends on it)."""
        key = (*parts, domains, g_used)
        hit = self._lb.get(key)
        if hit is None or hit[0] != self.limit_usd:
            hit = self._lb[key] = (self.limit_usd, min((self.point_bound_usd(a, domains, spare_rule, g_used)
                                                        for a in self.of_parts.get(parts, ())), default=math.inf))
        return hit[1]

    def point_bound_usd(self, a: Architecture, domains: int, spare_rule, g_used: int | None) -> float:
        """A lower bound on the cost of the architecture's design on these domains: the bill-of-materials LB
        (`arch_lower_bound_usd`) where that is already over UB_K, else the design's own closed-form cost (the
        evaluator's and the model's: `costing.design_cost` on the scenario's pinned or fewest tiers; inf when it
        cannot be built), which decides the points near UB_K more sharply."""
        cheap = self.arch_lower_bound_usd(a, domains, spare_rule, g_used)
        if cheap > self.limit_usd or self.limit_usd == math.inf:
            return cheap
        key = (a, domains, g_used)
        if key not in self.costs:
            # a design the dominance rule or an offer already costed is read; else only its cost is kept, not the design
            cost = self.costed[key] if key in self.costed else cost_of(self.scenario, self.catalog, a, domains, {}, g_used)
            self.costs[key] = math.inf if cost is None else costing.cost_for_objective_usd(cost, self.objective)
        return self.costs[key]

    def platform_lower_bound_usd(self, platform: str, domains: int, spare_rule, g_used: int | None) -> float:
        """The least LB over every architecture of the platform (`lower_bound_usd` of each of its NICs and rails)."""
        key = (platform, domains, g_used)
        hit = self._platform_lb.get(key)
        if hit is None or hit[0] != self.limit_usd:
            hit = self._platform_lb[key] = (self.limit_usd, min(
                (self._parts_lower_bound_usd(parts, domains, spare_rule, g_used)
                 for parts in self.of_parts if parts[0] == platform), default=math.inf))
        return hit[1]

    def platform_over(self, platform: str, domains: tuple[int, ...], spare_rule, g_used: int | None) -> bool:
        """Every architecture of the platform has its LB over UB_K at each of these domain counts (`over` of
        `platform_lower_bound_usd`), kept per (platform, domain counts, G_u) while UB_K stays the same: the layouts of
        one model-parallel size share their domain counts."""
        key = (platform, domains, g_used)
        hit = self._platform_over.get(key)
        if hit is None or hit[0] != self.limit_usd:
            hit = self._platform_over[key] = (self.limit_usd, self.over(
                self.platform_lower_bound_usd(platform, dom, spare_rule, g_used) for dom in domains))
        return hit[1]

    def over(self, lower_bounds) -> bool:
        """Every one of these lower bounds is over UB_K (then none of their points can be among the K best)."""
        return self.limit_usd < math.inf and min(lower_bounds, default=math.inf) > self.limit_usd

    def cut_index(self, perf: PerfClass, domains: list[int], spare_rule, g_used: int | None,
                  limit_usd: float | None = None) -> int:
        """The first index of a layout's points (ascending d) from which every point's LB is over `limit_usd`
        (default UB_K; the suffix minimum of the LBs is over it); len(domains) when there is none or the limit is
        not known yet."""
        limit = self.limit_usd if limit_usd is None else limit_usd
        n = len(domains)
        if limit == math.inf:
            return n
        # the layouts of one model-parallel size share their domain counts: the cut is kept per class's parts and
        # domain counts while the limit stays the same
        key = (perf.platform, perf.nic, perf.rails_per_node, g_used, tuple(domains))
        hit = self._cuts.get(key)
        if hit is not None and hit[0] == limit:
            return hit[1]
        cut, low = n, math.inf
        for j in range(n - 1, -1, -1):
            low = min(low, self.lower_bound_usd(perf, domains[j], spare_rule, g_used))
            if low <= limit:
                break
            cut = j
        self._cuts[key] = (limit, cut)
        return cut

    def budget_cut(self, perf: PerfClass, domains: list[int], spare_rule, g_used: int | None) -> int:
        """The first index from which every point's capex LB (owned parts netted, as the cap is judged) is over
        `budget_usd` (beyond its 10⁻⁹ tolerance): no design of those points is within the budget (the ranking's caps
        pre-check, `ranking.prune_points_over_caps`, drops them too). len(domains) without a budget."""
        if self.objective != "capex":  # the lower bounds of another objective (TCO: energy too) are not capex's
            raise ValueError("budget_cut needs a CostBound with objective='capex'")
        budget = self.scenario.constraints.budget_usd
        n = len(domains)
        return n if budget is None else self.cut_index(perf, domains, spare_rule, g_used, budget * (1 + 1e-9))

    # ------------------------------------------------------------------ the upper bound

    def offer(self, perf: PerfClass, layouts: list[Layout], spare_rule, costed: dict) -> None:
        """Cost the kept points of a new shape (each a point that meets memory, the target and the margins) on every
        architecture of its class whose LB could lower UB_K, and keep each identity's best cost."""
        for lay in layouts:
            for a in self.of_perf.get(perf, ()):
                self.offer_design(a, lay, spare_rule, costed)

    def offer_design(self, a: Architecture, lay: Layout, spare_rule, costed: dict) -> None:
        """One design known to meet memory, the target and the margins: its cost when the model offers it and the
        scenario accepts it, and when its LB could lower UB_K."""
        dom, g_used = lay.domains, lay.gpus_per_domain_used
        if self.arch_lower_bound_usd(a, dom, spare_rule, g_used) > self.limit_usd:
            return
        self.offered += 1
        cost = cost_of(self.scenario, self.catalog, a, dom, costed, g_used)
        if cost is None or not self._offered(a, cost, dom, costed, g_used):
            return
        value = costing.cost_for_objective_usd(cost, self.objective)
        key = (a.platform,) if self.by_platform else a.identity(cost.fabric.tiers)
        if key not in self.best or value < self.best[key][0]:
            self.best[key] = (value, a, lay)
            self._update()

    def _offered(self, a: Architecture, cost, dom: int, costed: dict, g_used: int | None) -> bool:
        """The design is one the model offers and the scenario accepts (as `optimize.data.points` and
        `optimize.ranking.admissible_design` judge it)."""
        sc = self.scenario
        if a not in self._tiers:
            self._tiers[a] = allowed_tiers(a, self.archs, sc)
        if cost.fabric.tiers not in self._tiers[a] or costing.caps_exceeded(cost, sc.constraints):
            return False  # (a pinned node count is never checked here: it builds without the dominance scan)
        key = (a, dom, g_used)  # the build's scenario and architectures: the same answer every time it is asked
        if key not in self._dominated:
            self._dominated[key] = dominated_by_fat_tree(sc, self.catalog, a, dom, self.archs, costed, g_used)
        return not self._dominated[key]

    def _update(self) -> None:
        if len(self.best) >= self.k:
            kth = sorted(v[0] for v in self.best.values())[self.k - 1]
            self.limit_usd = kth * (1 + COST_REL) + CENT_USD


# relative tolerance on the step-time bound: far above the ranking's tie rule (`optimize.ranking.SAME_SPEED_REL`, 1e-9),
# so it never cuts a design as fast as the K-th (the cheaper of equally fast designs ranks first)
STEP_REL = 1e-6


class StepBound(CostBound):
    """UB_K of a `fastest` build (`limit_s`): the K-th smallest step time of K distinct designs known to be real.

    Every kept point of the dominance scan meets memory and the margins; each is offered on every architecture of
    its class, and is a real design when the model offers it and the scenario accepts it (`CostBound._offered`:
    built on an allowed tier count, within every cap — the budget too —, not dominated by the fat tree of the same
    parts). The best step time per ranking identity is kept; once K identities are known,

        UB_K = the K-th smallest of them           (the K fastest distinct designs step in ≤ UB_K)

    and a point whose T_comp + bubble (a lower bound on its step time on any NIC: exposure and capacity are ≥ 0)
    is over UB_K cannot be one of them. T_comp + bubble never grows with d (docs/model.md "Monotone in d"), so a
    segment's scan starts at the first d whose T_comp + bubble is within UB_K (`scan._kept_points`). Exact for a
    space ranked for its K fastest designs (`solve` with `objective: fastest`); SPEC §7 ranks the faster first, so
    a design tied at UB_K is never cut."""

    def __init__(self, scenario: Scenario, catalog: Catalog, archs: list[Architecture], k: int,
                 distinct_by: str = "architecture", costed: dict | None = None, spare_rule=None):
        super().__init__(scenario, catalog, archs, k, distinct_by, objective="capex", costed=costed,
                         spare_rule=spare_rule)
        self.limit_s = math.inf  # UB_K with its tolerance; inf until K identities are known
        self.best_s: dict[tuple, float] = {}  # ranking identity → its best step time so far

    def offer_steps(self, perf: PerfClass, points: list[tuple[Layout, float]], spare_rule, costed: dict) -> None:
        """The kept points of a new shape, (layout, nominal step time), each meeting memory and the margins: on every
        architecture of the class that makes it a real design, each identity's best step time."""
        for lay, step_s in points:
            if step_s > self.limit_s:
                continue
            dom, g_used = lay.domains, lay.gpus_per_domain_used
            for a in self.of_perf.get(perf, ()):
                self.offered += 1
                cost = cost_of(self.scenario, self.catalog, a, dom, costed, g_used)
                if cost is None or not self._offered(a, cost, dom, costed, g_used):
                    continue
                key = (a.platform,) if self.by_platform else a.identity(cost.fabric.tiers)
                if step_s < self.best_s.get(key, math.inf):
                    self.best_s[key] = step_s
                    if len(self.best_s) >= self.k:
                        self.limit_s = sorted(self.best_s.values())[self.k - 1] * (1 + STEP_REL)
