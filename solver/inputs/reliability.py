"""Typed inputs of the goodput model (SPEC §6.2): the catalog's failure data and the scenario's
checkpoint, restart and spare settings. Referenced from `schema.Catalog.reliability` and
`schema.Scenario.reliability`; the formulas are in solver/perf/goodput.py and solver/reliability.py.
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .schema_base import Strict

Rate = Annotated[float, Field(ge=0, le=100)]


class FailureRate(Strict):
    """One part kind's interruptions per part per year, with where the number comes from."""

    annual_failure_rate: Rate
    """Job interruptions caused per part per year (a failure that stops a synchronous job)."""
    source: str = Field(min_length=1)
    """Where the rate comes from (docs/sources.md [n]) and how it was derived."""
    is_estimate: bool = False
    """True when the rate is an estimate (a split the source does not give, or own arithmetic)."""


class CatalogReliability(Strict):
    """Failure data per part kind and the checkpoint-storage default (catalog `reliability:`)."""

    gpu: FailureRate
    """A GPU with its HBM, SRAM, system processor and thermal interface."""
    node: FailureRate
    """A node (server, or NVL72 compute tray) other than its GPUs and NICs: host, CPU, memory, SSD, power."""
    nic: FailureRate
    """A scale-out NIC."""
    switch: FailureRate
    """A scale-out switch."""
    link: FailureRate
    """An optic or cable (one link with its modules)."""
    software: FailureRate
    """Job-level software interruptions (bugs, collective timeouts, dependencies), per GPU of the job."""
    checkpoint_write_gbyte_s_per_gpu: Annotated[float, Field(gt=0, le=1000)]
    """Checkpoint write bandwidth of the storage, GB/s per GPU of the job (when the scenario gives none)."""
    checkpoint_write_source: str = Field(min_length=1)
    """Where the write bandwidth comes from."""
    spare_idle_power_fraction: Annotated[float, Field(ge=0, le=1)] = 1.0
    """A hot spare is powered and idle: this fraction of its unit's power (1 = full power)."""
    spare_idle_power_source: str = ""
    """Where the idle fraction comes from."""


class ScenarioReliability(Strict):
    """Checkpoints, restarts and spares of the job (scenario `reliability:`; SPEC §6.2)."""

    spares: bool = True
    """Buy hot-spare units sized for `availability` over `repair_h` (with the catalog's failure data)."""
    availability: Annotated[float, Field(gt=0, lt=1)] = 0.99
    """Probability that the job's units are all available (failed ones replaced by spares) over a repair time."""
    repair_h: Annotated[float, Field(gt=0, le=10000)] = 72.0
    """Hours to repair or replace a failed node, tray or rack and return it to service (estimate)."""
    restart_min: Annotated[float, Field(ge=0, le=10000)] = 5.0
    """Minutes from an interruption to training again: detection, rescheduling, reloading the checkpoint. Default:
    an in-job restart with asynchronous checkpoints and warm standby nodes (estimate within published bounds,
    docs/sources.md [G5]: ≤ 16.7 min all-in per interruption from Llama 3's > 90 % effective training time over
    466 interruptions in 54 days; ~20 s with standby machines in TrainMover at 1,024 GPUs); a cold
    checkpoint-restart practice (rescheduling, reloading from remote storage) is ~15 min: set it here."""
    planned_interruptions_per_day: Annotated[float, Field(ge=0, le=1000)] = 0.87
    """Planned interruptions of the job per day (firmware and host updates, training changes), each checkpointed
    first and costing one restart: Llama 3's 47 planned in 54 days = 0.87/day (docs/sources.md [G1])."""
    checkpoint_write_gbyte_s: Annotated[float, Field(gt=0, le=1e7)] | None = None
    """Checkpoint write bandwidth of the storage, GB/s; null = the catalog's per-GPU value × the job's GPUs."""
    checkpoint_bytes_per_param: Annotated[float, Field(gt=0, le=64)] = 14.0
    """Bytes per parameter in a checkpoint: BF16 weights 2 + FP32 master weights 4 + Adam moments 4 + 4."""
    failure_rate_scale: Annotated[float, Field(gt=0, le=1000)] = 1.0
    """Multiplies every catalog failure rate (a younger or less burnt-in fleet is above 1)."""
    apply_to_target: bool = False
    """Apply the goodput to a target given as step_time_s too (targets in training days always use it)."""
