"""The design space: every allowed platform × NIC × rails × switch × oversubscription × layout shape.

A *shape* is one performance class (platform, NIC, rails, oversubscription) with one layout
(t, c, p, v, b, G_u) and the set of data-parallel degrees d it may take. For the optimisation
model each shape carries the coefficients of its step-time, exposure, link-capacity and memory rows
multiplied by d (SPEC §7), read off `perf.step.performance` and `perf.step.point_terms` at every
allowed d: the bandwidth terms are affine in d inside one placement regime, the latency, fsdp
per-microbatch and in-flight terms are not, so each (shape, d) binary carries its own exact
coefficient (SPEC §4.5 "Exactness") — the formulas live only in solver/perf.

Pruning is exact: a shape is dropped only if no allowed d fits in memory, or no allowed d meets
the target step time, or its placement is impossible. Nothing that could be optimal is removed.

The package: `plain` (the design space stated plainly, read first: `plain_design_space`; the fast build reuses its
enumeration and per-point functions and adds speed layers that cannot change the answer), `identity` (PerfClass, Architecture, Exposure, Condition, Shape, DesignSpace), `allowlists` (the
architectures and tier counts a scenario allows), `build` (`build_design_space`), `scan` (one layout's points,
their feasibility and the dominance scan), `bound` (the cost bound that stops a scan where no point can be among
the K best) and `dominance` (`dominated_by_fat_tree`). Import from here.
"""
from __future__ import annotations

from .allowlists import (
    above_pod_ratios,
    allowed_families,
    allowed_tiers,
    architectures,
    fabric_spec_of,
    hardware_of,
    one_tier_allowed,
    switch_serves_nic,
)
from .build import build_design_space
from .context import MARGIN_CONDITIONS
from .dominance import dominated_by_fat_tree
from .identity import PRUNE_LEVELS, Architecture, Condition, DesignSpace, Exposure, PerfClass, Shape
from .plain import plain_design_space
from .scan import goodput_bound

__all__ = [
    "MARGIN_CONDITIONS", "PRUNE_LEVELS", "Architecture", "Condition", "DesignSpace", "Exposure", "PerfClass", "Shape",
    "above_pod_ratios", "allowed_families", "allowed_tiers", "architectures", "build_design_space",
    "dominated_by_fat_tree", "fabric_spec_of", "goodput_bound", "hardware_of", "one_tier_allowed", "plain_design_space",
    "switch_serves_nic",
]
