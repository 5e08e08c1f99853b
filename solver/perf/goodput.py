"""Goodput of a synchronous training job (SPEC §6.2; docs/model.md "Goodput").

Every function takes plain floats or numpy arrays alike (the design space may evaluate a layout at
every data-parallel degree d at once), using only arithmetic and `numpy` ufuncs:

    λ_job  = Σ_parts count · rate                       interruptions per hour of the job
    M      = 1 / λ_job                                  job MTBF, h
    δ      = checkpoint bytes / write bandwidth          checkpoint write time, s
    τ      = √(2 δ M)                                   Young (1974) / Daly (2006) interval, s
    lost   = δ/τ + (τ/2 + R) / M                        checkpoint overhead + rework + restart, per second
    goodput = max(0, 1 − lost)

The first-order Young/Daly model holds while τ ≪ M; `goodput` is 0 where the job cannot make
progress (the loss reaches the whole time).
"""
from __future__ import annotations

import numpy as np

from ..units import HOURS_PER_YEAR


def per_hour(annual_rate):
    """Interruptions per hour from a rate per year: rate / 8,760 h."""
    return np.asarray(annual_rate, dtype=float) / HOURS_PER_YEAR


def job_mtbf_h(interruptions_per_h):
    """M = 1 / λ_job, h (infinite with no failure data)."""
    rate = np.asarray(interruptions_per_h, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(rate > 0, 1.0 / np.maximum(rate, 1e-300), np.inf)


def checkpoint_write_s(checkpoint_bytes, write_gbyte_s):
    """δ = checkpoint bytes / (write GB/s · 1e9), s."""
    return np.asarray(checkpoint_bytes, dtype=float) / (np.asarray(write_gbyte_s, dtype=float) * 1e9)


def young_daly_interval_s(checkpoint_s, mtbf_h):
    """τ = √(2 δ M) with M in seconds (Young 1974; Daly 2006, first order)."""
    return np.sqrt(2.0 * np.asarray(checkpoint_s, dtype=float) * np.asarray(mtbf_h, dtype=float) * 3600.0)


def lost_fraction(checkpoint_s, mtbf_h, restart_s, planned_per_h=0.0):
    """lost = δ/τ + (τ/2 + R)/M + P·R at τ = √(2δM): the checkpoint overhead, the expected rework (half an
    interval) and the restart per interruption, as fractions of wall-clock time (0 when M is infinite), plus the
    planned interruptions P per hour (maintenance, upgrades: checkpointed first, so each costs a restart only)."""
    delta = np.asarray(checkpoint_s, dtype=float)
    m_s = np.asarray(mtbf_h, dtype=float) * 3600.0
    tau = young_daly_interval_s(delta, mtbf_h)
    finite = np.isfinite(m_s)
    safe_m = np.where(finite, m_s, 1.0)
    safe_tau = np.where(tau > 0, tau, 1.0)
    restart = np.asarray(restart_s, dtype=float)
    loss = np.where(tau > 0, delta / safe_tau, 0.0) + (tau / 2.0 + restart) / safe_m
    return np.where(finite, loss, 0.0) + np.asarray(planned_per_h, dtype=float) / 3600.0 * restart


def goodput(checkpoint_s, mtbf_h, restart_s, planned_per_h=0.0):
    """goodput = max(0, 1 − lost): the fraction of wall-clock time spent on useful training steps."""
    return np.maximum(0.0, 1.0 - lost_fraction(checkpoint_s, mtbf_h, restart_s, planned_per_h))



def poisson_quantile(mean, probability: float) -> int:
    """The least s with P(Poisson(mean) ≤ s) ≥ probability (summed term by term; mean ≥ 0)."""
    mean = float(mean)
    if mean <= 0:
        return 0
    term = float(np.exp(-mean))
    cdf, s = term, 0
    while cdf < probability and s < 1_000_000:
        s += 1
        term *= mean / s
        cdf += term
        if term == 0.0 and cdf < probability:  # exp(−mean) underflowed: start from the normal approximation
            return int(np.ceil(mean + 4.0 * np.sqrt(mean)))
    return s


def poisson_tail(mean, above: int):
    """P(Poisson(mean) > above) = 1 − Σ_{n ≤ above} e^{−mean} mean^n / n!."""
    mean = np.asarray(mean, dtype=float)
    term = np.exp(-mean)
    cdf = term.copy() if isinstance(term, np.ndarray) else term
    for n in range(1, above + 1):
        term = term * mean / n
        cdf = cdf + term
    return np.maximum(0.0, 1.0 - cdf)
