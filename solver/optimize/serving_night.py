"""A training job on a serving fleet's off-peak GPUs (SPEC §4.9 stretch, one purchase for both uses): the GPUs of
the fleet's decode (or aggregated) pool idle in at least H hours of the day (serving_schedule) train a given job
with its fastest layout on them — the training design space and MILP of solver/optimize/solve.py with the fleet's
platform and G = those idle GPUs as max_gpus (`objective: fastest`). Reported: the step time, the GPUs used and the
training tokens per day = H · 3,600 / step time · B · s. The training cluster's own fabric and costs are not added
to the purchase: the job runs on the fleet's nodes with their NIC, rails, switch and fabric family."""
from __future__ import annotations

import copy
from pathlib import Path

from ..errors import InputError
from ..inputs import LoadedScenario, load_scenario
from ..inputs.schema import Catalog
from .serving_results import FleetDesign


def night_gpus(design: FleetDesign, hours: int) -> tuple[int, str]:
    """(G, platform): the back pool's GPUs idle in at least `hours` hours of the day, whole nodes only."""
    assert design.schedule is not None
    pool = design.back
    g = pool.option.gpus_per_replica
    idle = sorted(((pool.replicas - h["replicas"][pool.role]) * g for h in design.schedule["hours"]), reverse=True)
    per_node = max(1, pool.cost.gpus // max(1, pool.cost.nodes))
    return idle[hours - 1] // per_node * per_node, pool.option.machine.platform


def _training_scenario(ls: LoadedScenario, name: str) -> LoadedScenario:
    """The night job's scenario file, relative to the serving scenario's; a located input error (the serving file's
    serving.night_training.scenario) when it is missing or is not a training scenario."""
    path = Path(name) if Path(name).is_absolute() else Path(str(ls.doc.path)).resolve().parent / name
    field = ("serving", "night_training", "scenario")
    if not path.is_file():
        raise InputError([ls.doc.problem(field, f"no file {path}: give a training scenario, relative to this file")])
    training = load_scenario(path)
    if training.scenario.workload.kind != "training" or training.scenario.serving is not None:
        raise InputError([ls.doc.problem(field, f"{name} is a serving scenario (workload.kind: inference): give a "
                                                "training scenario for the off-peak GPUs")])
    return training


def night_training(ls: LoadedScenario, catalog: Catalog, design: FleetDesign) -> dict:
    """The night job's fastest design on the fleet's idle GPUs, or why there is none."""
    from .solve import solve

    spec = ls.scenario.serving.night_training if ls.scenario.serving else None
    assert spec is not None
    gpus, platform = night_gpus(design, spec.hours)
    out: dict = {"scenario": spec.scenario, "hours_per_day": spec.hours, "idle_gpus": gpus, "platform": platform}
    if gpus < 1:
        return {**out, "status": "infeasible", "explanation": f"no GPUs of {platform} are idle {spec.hours} hours a day"}
    training = _training_scenario(ls, spec.scenario)
    data = copy.deepcopy(training.doc.data)
    m = design.back.option.machine  # the job runs on the fleet's nodes: their NICs, rails, switch and fabric family
    data.setdefault("constraints", {}).update(platforms=[platform], max_gpus=gpus, nics=[m.nic], switches=[m.switch],
                                              rails_per_node=[m.rails_per_node], fabrics=[m.fabric], nic_configurations="any")
    data["objective"], data["top_k"] = "fastest", 1
    data.pop("target", None)
    data.pop("pin", None)
    result = solve(load_scenario(data, display=spec.scenario), catalog, top_k=1)
    if not result.designs:
        return {**out, "status": "infeasible", "explanation": result.explanation}
    d = result.designs[0]
    w = training.scenario.workload
    tokens_per_step = w.global_batch_size * w.model.seq_len
    return {**out, "status": "optimal", "gpus_used": d.perf.gpus, "gpus_with_spares": d.cost.gpus, "layout": d.label,
            "step_time_s": d.perf.step_time_s,
            "training_tokens_per_day": spec.hours * 3600.0 / d.perf.step_time_s * tokens_per_step}
