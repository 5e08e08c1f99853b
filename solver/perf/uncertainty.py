"""How far a predicted step time may be from the truth (SPEC §4.8 v4): OUT-OF-SAMPLE residuals of the published
calibration runs in the design's regime, widened where the regime has few runs, few sources or runs that disagree.

`residuals.yaml` beside this module (written by tools/residuals.py; tests/perf/test_uncertainty.py keeps it in
step) holds one residual per published run, e = predicted throughput / published − 1 = published step time /
predicted − 1, each measured on a run its own source never helped fit: dense runs by leave-one-source-out refits
of the compute parameters, MoE runs from the held-out file (no MoE parameter was chosen on them).

A design's regime is (family, stack, GPU, precision, dominant term): family `dense` or `moe` (an MoE design is
never judged by dense runs), the dominant term `compute` when T_comp + bubble ≥ half the step (`regime_term`).
The rule (`interval`), with every constant chosen by the leave-one-source-out coverage it gives (`coverage`):

1. the regime USED is the first of family·stack·GPU·precision·term, family·stack·GPU·precision,
   family·stack·precision, family·stack, family, every run, holding MIN_ROWS runs from MIN_SOURCES sources;
2. few sources: when the used regime's runs come from fewer than WIDE_SOURCES sources, the next coarser regime
   with MIN_ROWS runs is BORROWED too and each end is the wider of the two (the text names it);
3. q_lo, q_hi = empirical quantiles at P_LO, P_HI (wider than 10/90: a run from a new source lands outside
   the spread of the known ones more often than the known ones do);
4. interval = [T·(1 + min(q_lo, −FLOOR)), T·(1 + max(q_hi, FLOOR))]: never narrower than ±FLOOR, and never than
   ±UNSEEN_STACK when no regime of the design's own stack has runs (the stack's factor is then unknown: the fitted
   stacks' GEMM factors span torchtitan × 0.73 to fsdp × 1.07 around megatron's);
5. `robustness.quantile = q`: k_q = 1 + max(Q_q(e), FLOOR, UNSEEN_STACK if the stack has no run) of the used
   regime's runs (the MILP meets T·k_q ≤ target).

Disagreeing runs widen the interval by themselves (their quantiles); a regime whose runs are biased (median
|e| ≥ BIAS) gets a flag (`Regime.flags`). Every function is elementwise: nothing depends on d.
The machinery is general (`interval(levels, rows)`: a list of attribute maps, most specific first) so other
families (serving) can use it with their own rows and keys.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import yaml

MIN_ROWS = 4  # a regime needs this many runs …
MIN_SOURCES = 2  # … from this many sources, else the next coarser regime is used
WIDE_SOURCES = 4  # fewer sources than this: the parent regime is borrowed as well (the wider ends)
P_LO, P_HI = 0.04, 0.96  # the quantiles of the runs' residuals that bound the p10–p90 interval
FLOOR = 0.10  # the smallest half-width of any interval
UNSEEN_STACK = 0.27  # a stack without runs of its own: at least ±27 % (the fitted stacks' GEMM factors span 0.73–1.07)
BIAS = 0.10  # |median residual| of a regime at or above this: the model is biased there, a flag says so
COMPUTE_SHARE = 0.5  # the dominant term is `compute` when T_comp + bubble ≥ this share of the step
RESIDUALS_PATH = Path(__file__).resolve().parent / "residuals.yaml"
ATTRS = ("family", "stack", "gpu", "precision", "term")


@dataclass(frozen=True)
class ResidualRow:
    """One published run's out-of-sample residual, its source and its regime."""

    id: str
    source: str
    family: str
    stack: str
    gpu: str
    precision: str
    term: str
    error: float

    def get(self, attr: str) -> str:
        return str(getattr(self, attr))


@dataclass(frozen=True)
class Regime:
    """The residuals a design's step time is judged by: the regime asked for, the one used (after any fallback),
    any parent borrowed for few sources, its runs' and sources' count, and the interval's ends as fractions."""

    asked: str
    used: str
    rows: int
    q10: float  # the interval's lower end as a fraction of T (already widened: ≤ −FLOOR)
    q90: float  # the upper end (≥ FLOOR)
    sources: int = 0
    borrowed: str = ""
    median: float = 0.0
    ids: tuple[str, ...] = field(default=(), repr=False)
    unseen_stack: bool = False  # no regime of the design's own stack has runs

    @property
    def fell_back(self) -> bool:
        return self.asked != self.used

    def text(self) -> str:
        """"−12%/+15%, 21 runs, 4 sources (megatron·h100-sxm·fp8·compute)", naming any fallback and borrowing."""
        if self.rows == 0:
            return f"no calibration run in any regime of {self.asked}"
        lo, hi = _clamped(self.q10, self.q90)
        spread = f"{lo:+.0%}/{hi:+.0%}" if round(-lo, 2) != round(hi, 2) else f"±{hi:.0%}"
        where = self.used if not self.fell_back else f"{self.used}; no {MIN_ROWS}+ runs from {MIN_SOURCES}+ sources " \
                                                     f"in {self.asked}"
        if self.borrowed:
            where += f"; widened to {self.borrowed}"
        return f"{spread}, {self.rows} runs, {self.sources} sources ({where})"

    def flags(self) -> list[str]:
        """What a buyer must know about this regime's calibration: no run, a fallback, a bias."""
        out = []
        if self.rows == 0:
            out.append(f"no published run calibrates {self.asked}")
        elif self.fell_back:
            out.append(f"no {MIN_ROWS}+ published runs in {self.asked}: interval from {self.used}"
                       + (f", at least ±{UNSEEN_STACK:.0%} (no published run of this stack)" if self.unseen_stack else ""))
        if self.rows and abs(self.median) >= BIAS:
            way = "slow" if self.median > 0 else "fast"  # e > 0: published step longer than predicted
            out.append(f"the model is biased in {self.used}: published runs are {abs(self.median):.0%} {way}er than "
                       f"predicted (median of {self.rows})")
        return out


def regime_term(compute_and_bubble_s, step_time_s):
    """`compute` when T_comp + bubble ≥ COMPUTE_SHARE of the step, else `communication` (numpy-friendly: arrays
    give an array of words)."""
    if isinstance(compute_and_bubble_s, float | int) and isinstance(step_time_s, float | int):
        return "compute" if compute_and_bubble_s >= COMPUTE_SHARE * step_time_s else "communication"
    return np.where(np.asarray(compute_and_bubble_s) >= COMPUTE_SHARE * np.asarray(step_time_s), "compute",
                    "communication")


@lru_cache(maxsize=1)
def residual_rows() -> tuple[ResidualRow, ...]:
    """The shipped residual table (`residuals.yaml`)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: 14 ms against 80 ms for the pure-Python parser
    data = yaml.load(RESIDUALS_PATH.read_text(encoding="utf-8"), Loader=loader) or {}  # noqa: S506 (a safe loader)
    return tuple(ResidualRow(**row) for row in data.get("rows", []))


def levels_of(family: str, stack: str, gpu: str, precision: str, term: str) -> list[dict[str, str]]:
    """The regimes of a training design, most specific first."""
    full = {"family": family, "stack": stack, "gpu": gpu, "precision": precision, "term": term}
    keep = [ATTRS, ATTRS[:4], ("family", "stack", "precision"), ("family", "stack"), ("family",), ()]
    return [{k: full[k] for k in attrs} for attrs in keep]


def _name(level: Mapping[str, str]) -> str:
    return "·".join(level.values()) if level else "every calibration run"


def _match(rows: Sequence, level: Mapping[str, str]) -> list:
    return [r for r in rows if all(r.get(k) == v for k, v in level.items())]


def _ok(rows: list) -> bool:
    return len(rows) >= MIN_ROWS and len({r.source for r in rows}) >= MIN_SOURCES


def interval(levels: Sequence[Mapping[str, str]], rows: Sequence | None = None) -> Regime:
    """The rule of the module docstring over `rows` (default: the shipped table) for a regime given as its levels
    (attribute maps, most specific first; rows need `.get(attr)`, `.source`, `.error`, `.id`). Returns the
    widened ends as fractions (p10 factor = 1 + q10, p90 factor = 1 + q90) and the runs behind them."""
    rows = residual_rows() if rows is None else rows
    asked = _name(levels[0])
    for i, level in enumerate(levels):
        used = _match(rows, level)
        if not _ok(used):
            continue
        errors = [r.error for r in used]
        lo, hi = (float(x) for x in np.quantile(errors, [P_LO, P_HI]))
        borrowed = ""
        if len({r.source for r in used}) < WIDE_SOURCES:
            for parent in levels[i + 1:]:
                more = _match(rows, parent)
                if _ok(more) and len(more) > len(used):
                    plo, phi = (float(x) for x in np.quantile([r.error for r in more], [P_LO, P_HI]))
                    lo, hi, borrowed = min(lo, plo), max(hi, phi), _name(parent)
                    break
        lo, hi = _clamped(lo, hi)
        unseen = "stack" in levels[0] and "stack" not in level  # no run of this stack anywhere: its factor is unknown
        if unseen:
            lo, hi = min(lo, -UNSEEN_STACK), max(hi, UNSEEN_STACK)
        return Regime(asked, _name(level), len(used), lo, hi, len({r.source for r in used}), borrowed,
                      float(np.median(errors)), tuple(r.id for r in used), unseen)
    return Regime(asked, asked, 0, -FLOOR, FLOOR)


def _clamped(q10: float, q90: float) -> tuple[float, float]:
    return min(q10, -FLOOR), max(q90, FLOOR)


@lru_cache(maxsize=4096)
def regime(stack: str, gpu: str, precision: str, term: str, family: str = "dense") -> Regime:
    """The regime of a training design and its widened interval."""
    return interval(levels_of(family, stack, gpu, precision, term))


def step_time_interval_s(step_time_s: float, reg: Regime) -> tuple[float, float]:
    """[T·(1 + q_lo), T·(1 + q_hi)], the ends already widened (≤ −FLOOR, ≥ FLOOR)."""
    lo, hi = _clamped(reg.q10, reg.q90)
    return step_time_s * (1 + lo), step_time_s * (1 + hi)


@lru_cache(maxsize=4096)
def quantile_factor(stack: str, gpu: str, precision: str, term: str, quantile: float, family: str = "dense") -> float:
    """k_q = 1 + max(Q_q(e), FLOOR) over the runs of the design's regime (the MILP's per-point coefficient); at least
    1 + UNSEEN_STACK for a stack without runs of its own."""
    reg = regime(stack, gpu, precision, term, family)
    ids = set(reg.ids)
    errors = [r.error for r in residual_rows() if r.id in ids]
    return 1.0 + max(float(np.quantile(errors, quantile)) if errors else 0.0, FLOOR,
                     UNSEEN_STACK if reg.unseen_stack else 0.0)


def design_regime(stack: str, gpu: str, precision: str, compute_and_bubble_s: float, step_time_s: float,
                  moe: bool = False) -> Regime:
    """The regime of one evaluated design."""
    return regime(stack, gpu, precision, str(regime_term(compute_and_bubble_s, step_time_s)), "moe" if moe else "dense")


def point_factor(stack: str, gpu: str, precision: str, compute_and_bubble_s: float, step_time_s: float,
                 quantile: float | None, moe: bool = False) -> float:
    """The robustness coefficient of one point: k_q of its regime, 1 without `robustness.quantile`."""
    if quantile is None:
        return 1.0
    return quantile_factor(stack, gpu, precision, str(regime_term(compute_and_bubble_s, step_time_s)), quantile,
                           "moe" if moe else "dense")


def coverage(rows: Sequence[ResidualRow] | None = None) -> dict[str, tuple[int, int]]:
    """Leave-one-source-out coverage of the rule: each run's interval is built from the runs of OTHER sources only,
    and counts when its own residual lies inside. {family: (inside, runs)}."""
    rows = residual_rows() if rows is None else rows
    out: dict[str, list[int]] = {}
    for source in sorted({r.source for r in rows}):
        others = [r for r in rows if r.source != source]
        for r in (r for r in rows if r.source == source):
            reg = interval(levels_of(r.family, r.stack, r.gpu, r.precision, r.term), others)
            hit = out.setdefault(r.family, [0, 0])
            hit[0] += reg.q10 <= r.error <= reg.q90
            hit[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def coverage_report() -> str:
    """tools/residuals.py --coverage: the held-out coverage per family."""
    return "\n".join(f"{fam}: {i} of {n} runs inside their p10–p90 ({i / n:.0%}), leave-one-source-out"
                     for fam, (i, n) in coverage().items())
