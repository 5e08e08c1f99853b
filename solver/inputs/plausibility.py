"""Plausibility warnings: valid values that are probably a unit mistake (seconds for milliseconds,
dollars for millions, kW for MW, tokens for sequences). A warning never stops a run; it names the
file, line and field, what is unusual and what was probably meant.

The ranges are deliberately wide (published training runs, docs/sources.md): a step takes about
1–60 s (Llama 3 405B: 16M tokens per step on 16k H100s; NeMo recipes: 1–30 s), a batch holds
0.5–64M tokens, a run lasts days to months, a cluster costs $100k and up and draws 10 kW and up.
"""
from __future__ import annotations

from .scenario import LoadedScenario

STEP_TIME_S = (0.05, 600.0)  # outside: probably ms for s, or minutes/hours
TOKENS_PER_STEP_MAX = 2e8  # above: global_batch_size probably given in tokens, not sequences
TRAIN_DAYS = (1.0, 3650.0)
TRAIN_TOKENS_MIN = 1e8  # below: probably billions written as a plain number (15 for 15e9)
BUDGET_USD_MIN = 1e5  # below: probably millions (40 for $40M)
POWER_KW = (10.0, 1e7)  # below: probably MW; above: probably W
POWER_KW_SMALL = 100.0  # below, for more than 64 GPUs (or no GPU cap): probably MW
KW_PER_GPU = 1.6  # DGX H100 10.2 kW / 8 GPUs = 1.3 kW, plus network, × PUE 1.25 ≈ 1.6 kW per GPU
USD_PER_KWH_MAX = 2.0  # above: probably cents or $/MWh


def plausibility_warnings(ls: LoadedScenario) -> list[str]:
    """Located warnings for values that are valid but probably a unit mistake."""
    sc, doc = ls.scenario, ls.doc
    out: list[str] = []

    def warn(loc: tuple, text: str) -> None:
        line, col = doc.mark(loc)
        out.append(f"{doc.path}:{line}:{col}: {'.'.join(map(str, loc))}: {text}")

    t = sc.target
    if t.step_time_s is not None and not STEP_TIME_S[0] <= t.step_time_s <= STEP_TIME_S[1]:
        warn(("target", "step_time_s"), f"{t.step_time_s:g} s per step is unusual (training steps take about "
             f"{STEP_TIME_S[0]:g}–{STEP_TIME_S[1]:g} s): the value is in seconds; check the unit")
    if t.train_days is not None and not TRAIN_DAYS[0] <= t.train_days <= TRAIN_DAYS[1]:
        warn(("target", "train_days"), f"{t.train_days:g} days of training is unusual: the value is in days")
    if t.train_tokens is not None and t.train_tokens < TRAIN_TOKENS_MIN:
        warn(("target", "train_tokens"), f"{t.train_tokens:g} tokens is very few: write 15T tokens as 15e12")
    tokens = sc.workload.global_batch_size * sc.workload.model.seq_len
    if tokens > TOKENS_PER_STEP_MAX:
        warn(("workload", "global_batch_size"), f"{sc.workload.global_batch_size:,} sequences of "
             f"{sc.workload.model.seq_len:,} tokens is {tokens:.3g} tokens per step: global_batch_size counts "
             "sequences, not tokens")
    con = sc.constraints
    if con.budget_usd is not None and con.budget_usd < BUDGET_USD_MIN:
        warn(("constraints", "budget_usd"), f"${con.budget_usd:,.0f} buys less than one GPU server: the value is "
             "in dollars (write $40M as 40e6)")
    if con.facility_power_kw is not None and not POWER_KW[0] <= con.facility_power_kw <= POWER_KW[1]:
        hint = "write 20 MW as 20000" if con.facility_power_kw < POWER_KW[0] else "the value is in kW, not W"
        warn(("constraints", "facility_power_kw"), f"{con.facility_power_kw:,.6g} kW is unusual for a GPU cluster: {hint}")
    elif con.facility_power_kw is not None and con.facility_power_kw < POWER_KW_SMALL and (con.max_gpus or 65) > 64:
        gpus = con.facility_power_kw / KW_PER_GPU
        warn(("constraints", "facility_power_kw"), f"{con.facility_power_kw:,.6g} kW powers only about {gpus:,.0f} GPUs "
             f"(about {KW_PER_GPU:g} kW each with their servers, network and PUE): the value is in kW; write 20 MW as "
             "20000")
    if sc.tco.usd_per_kwh is not None and sc.tco.usd_per_kwh > USD_PER_KWH_MAX:
        warn(("tco", "usd_per_kwh"), f"${sc.tco.usd_per_kwh:g} per kWh is unusual: the value is in dollars per kWh "
             "(8 cents is 0.08)")
    if sc.objective != "fastest" and t.step_time_s is None and sc.workload.kind == "training":
        step = sc.target_step_time_s()
        if not STEP_TIME_S[0] <= step <= STEP_TIME_S[1]:
            warn(("target",), f"train_tokens and train_days ask for {step:.3g} s per step, which is unusual: check "
                 "both values and global_batch_size")
    return out
