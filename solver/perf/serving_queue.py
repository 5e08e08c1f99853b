"""Queueing at the prefill servers (SPEC §4.9; docs/model.md "Serving"): TTFT p90 = prefill time + the p90 wait.

The approximation (stated): requests arrive as a Poisson stream at λ per s; c servers (replicas) each serve one
prompt at a time for S seconds (deterministic for one prompt length: M/D/c; M/G/c with the service time's squared
coefficient of variation c_s²). The M/M/c waiting time is exponential past the Erlang-C probability of waiting,
P(W > t) = C(c, A)·exp(−(cμ − λ)·t), A = λ·S, μ = 1/S; the Allen–Cunneen/Kingman scaling by (1 + c_s²)/2 carries it
to M/G/c: P(W > t) ≈ C(c, A)·exp(−2(cμ − λ)·t/(1 + c_s²)). tests/perf/test_serving_queue.py checks it against a
seeded discrete-event simulation of the same queue.
"""
from __future__ import annotations

import math


def erlang_b(servers: int, offered_load: float) -> float:
    """B(c, A) = P(N = c)/P(N ≤ c), N ~ Poisson(A): the recursion B(k) = A·B(k−1)/(k + A·B(k−1)), started at
    k0 = ⌊A − 8√A − 20⌋ (below it the Poisson mass is negligible) from B(k0) = 1/Σ_j Π_{i<j} (k0 − i)/A, summed until
    the terms fall under 1e-17: O(√A) work, not O(c)."""
    c, a = servers, offered_load
    if a <= 0:
        return 0.0
    k0 = min(c, max(0, int(a - 8.0 * math.sqrt(a) - 20.0)))
    total, term, i = 1.0, 1.0, k0
    while i > 0:
        term *= i / a
        total += term
        if term < 1e-17 * total:
            break
        i -= 1
    b = 1.0 / total
    for k in range(k0 + 1, c + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(servers: int, offered_load: float) -> float:
    """C(c, A) = B/(1 − ρ(1 − B)): the probability an arrival waits in M/M/c, A = λ·S < c (1 at or past
    saturation; 0 when c ≥ A + 8√A + 20, where it is below 1e-15)."""
    c, a = servers, offered_load
    if a <= 0:
        return 0.0
    if a >= c:
        return 1.0
    if c >= a + 8.0 * math.sqrt(a) + 20.0:
        return 0.0
    b = erlang_b(c, a)
    return b / (1.0 - a / c * (1.0 - b))


def wait_quantile_s(service_s: float, arrival_rate_per_s: float, servers: int, *, service_scv: float = 0.0,
                    quantile: float = 0.9) -> float:
    """W_q = max(0, (1 + c_s²)/(2(cμ − λ))·ln(C(c, A)/(1 − q))): the q-quantile of the wait (inf when λ·S ≥ c)."""
    if arrival_rate_per_s <= 0 or service_s <= 0:
        return 0.0
    a = arrival_rate_per_s * service_s
    if a >= servers:
        return math.inf
    c_wait = erlang_c(servers, a)
    tail = 1.0 - quantile
    if c_wait <= tail:
        return 0.0
    drain = servers / service_s - arrival_rate_per_s
    return (1.0 + service_scv) / (2.0 * drain) * math.log(c_wait / tail)


def ttft_p90_s(prefill_s: float, arrival_rate_per_s: float, servers: int, *, service_s: float | None = None,
               service_scv: float = 0.0, quantile: float = 0.9, extra_s: float = 0.0) -> float:
    """TTFT_p90 = T_pf + W_q,0.9(S, λ, c) + extra (the KV transfer of a disaggregated fleet): prefill time plus the
    p90 wait at the c prefill servers, each busy S per request (S = T_pf unless given: a pipelined or chunked
    replica is busy less than a prompt's latency)."""
    s = prefill_s if service_s is None else service_s
    return prefill_s + wait_quantile_s(s, arrival_rate_per_s, max(servers, 1), service_scv=service_scv,
                                       quantile=quantile) + extra_s
