"""JSON reports (SPEC §8.3): NaN/infinity written as null, files written atomically."""
from __future__ import annotations

import json
import math
from pathlib import Path

from .io import atomic_path, current_run_id


def clean(value):
    """JSON has no NaN or infinity: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def dumps(data: dict) -> str:
    return json.dumps(clean(data), indent=2, sort_keys=False, allow_nan=False) + "\n"


def write_json(data: dict, path: str | Path) -> Path:
    """Write `data` as JSON atomically."""
    run_id = current_run_id()  # every file of an output set names its run (reports/commit.py)
    with atomic_path(path) as tmp:
        tmp.write_text(dumps({**data, "run_id": run_id} if run_id else data), encoding="utf-8")
    return Path(path)
