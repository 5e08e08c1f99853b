"""How far a predicted step time may be from the truth (SPEC §4.8): the residuals of the published
calibration runs in the design's regime.

Each calibration row (tests/perf/calibration_rows.py, groups fit, held_out and external) left a residual
e = predicted throughput / published − 1, which is also the published step time over the predicted one,
minus 1. `tools/calibrate.py --residuals` writes them, with the row's regime, into `residuals.yaml`
beside this module (shipped in the package; tests/perf/test_uncertainty.py keeps it in step with the rows).

A design's regime is (stack, GPU, precision, dominant term), the dominant term being `compute` when
T_comp + bubble is at least half of the step (`regime_term`), else `communication`. With fewer than
MIN_ROWS rows the regime falls back to a coarser one (stack × GPU × precision, stack × precision, stack,
every row) and says so. Then (`step_time_interval_s`, `quantile_factor`):

    interval = [T·(1 + min(Q_0.1(e), −FLOOR)), T·(1 + max(Q_0.9(e), FLOOR))]
    k_q      = 1 + max(Q_q(e), FLOOR)           (robustness.quantile = q: the MILP meets T·k_q ≤ target)

Q_q is the empirical quantile (linear interpolation). FLOOR = 8 %, the smallest half-width of any interval,
is the smallest of 5, 6 and 8 % whose leave-one-out coverage on the residual table itself reaches 80 % (each
row's interval from the other rows: 77, 79 and 82 %); a few rows of one GPU cannot tell a narrower spread from
luck, and one published recipe already spreads ±5 % across releases (Megatron-Bridge's H100 Llama 3.1 405B:
292, 302, 311, 326 tokens/s/GPU). Every function is elementwise: nothing depends on d.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import yaml

MIN_ROWS = 4  # fewer rows than this in a regime: fall back to a coarser one
FLOOR = 0.08  # the smallest half-width of an interval (leave-one-out coverage 82 % on the residual table)
COMPUTE_SHARE = 0.5  # the dominant term is `compute` when T_comp + bubble ≥ this share of the step
RESIDUALS_PATH = Path(__file__).resolve().parent / "residuals.yaml"


@dataclass(frozen=True)
class ResidualRow:
    """One calibration row's residual and its regime."""

    id: str
    stack: str
    gpu: str
    precision: str
    term: str
    error: float


@dataclass(frozen=True)
class Regime:
    """The residuals a design's step time is judged by: the regime asked for, the one used (after any
    fallback), its rows' count and quantiles."""

    asked: str
    used: str
    rows: int
    q10: float
    q90: float

    @property
    def fell_back(self) -> bool:
        return self.asked != self.used

    def text(self) -> str:
        """"±14 %, 6 runs (megatron·h100-sxm·fp8·compute)", naming any fallback."""
        lo, hi = _clamped(self.q10, self.q90)
        spread = f"{lo:+.0%}/{hi:+.0%}" if round(-lo, 2) != round(hi, 2) else f"±{hi:.0%}"
        if self.rows == 0:
            return f"no calibration run in any regime of {self.asked}"
        where = f"{self.used}" if not self.fell_back else f"{self.used}; no {MIN_ROWS}+ runs in {self.asked}"
        return f"{spread}, {self.rows} runs ({where})"


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


def _keys(stack: str, gpu: str, precision: str, term: str) -> list[tuple]:
    return [(stack, gpu, precision, term), (stack, gpu, precision), (stack, precision), (stack,), ()]


def _key_of(row: ResidualRow, level: int) -> tuple:
    full = (row.stack, row.gpu, row.precision, row.term)
    return [full, full[:3], (row.stack, row.precision), (row.stack,), ()][level]


@lru_cache(maxsize=4096)
def _regime_errors(stack: str, gpu: str, precision: str, term: str) -> tuple[str, list[float]]:
    """(the regime used, its residuals): the first level, most specific first, with MIN_ROWS rows."""
    for level, key in enumerate(_keys(stack, gpu, precision, term)):
        errors = [r.error for r in residual_rows() if _key_of(r, level) == key]
        if len(errors) >= MIN_ROWS:
            return ("·".join(key) if key else "every calibration run"), errors
    return "", []


@lru_cache(maxsize=4096)
def regime(stack: str, gpu: str, precision: str, term: str) -> Regime:
    """The regime of a design and the quantiles of its residuals."""
    asked = "·".join((stack, gpu, precision, term))
    used, errors = _regime_errors(stack, gpu, precision, term)
    if not errors:
        return Regime(asked, asked, 0, -FLOOR, FLOOR)
    q10, q90 = np.quantile(errors, [0.1, 0.9])
    return Regime(asked, used, len(errors), float(q10), float(q90))


def _clamped(q10: float, q90: float) -> tuple[float, float]:
    return min(q10, -FLOOR), max(q90, FLOOR)


def step_time_interval_s(step_time_s: float, reg: Regime) -> tuple[float, float]:
    """[T·(1 + min(Q_0.1, −FLOOR)), T·(1 + max(Q_0.9, FLOOR))]."""
    lo, hi = _clamped(reg.q10, reg.q90)
    return step_time_s * (1 + lo), step_time_s * (1 + hi)


@lru_cache(maxsize=4096)
def quantile_factor(stack: str, gpu: str, precision: str, term: str, quantile: float) -> float:
    """k_q = 1 + max(Q_q(e), FLOOR) of the regime's residuals (the MILP's per-point coefficient)."""
    _, errors = _regime_errors(stack, gpu, precision, term)
    return 1.0 + max(float(np.quantile(errors, quantile)) if errors else 0.0, FLOOR)


def design_regime(stack: str, gpu: str, precision: str, compute_and_bubble_s: float, step_time_s: float) -> Regime:
    """The regime of one evaluated design."""
    return regime(stack, gpu, precision, str(regime_term(compute_and_bubble_s, step_time_s)))


def point_factor(stack: str, gpu: str, precision: str, compute_and_bubble_s: float, step_time_s: float,
                 quantile: float | None) -> float:
    """The robustness coefficient of one point: k_q of its regime, 1 without `robustness.quantile`."""
    if quantile is None:
        return 1.0
    return quantile_factor(stack, gpu, precision, str(regime_term(compute_and_bubble_s, step_time_s)), quantile)
