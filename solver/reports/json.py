"""JSON reports (SPEC §8.3): NaN/infinity written as null, files written atomically."""
from __future__ import annotations

import json
from pathlib import Path

from ..files import atomic_path, clean, current_run_id

__all__ = ["clean", "dumps", "write_json"]


def dumps(data: dict) -> str:
    return json.dumps(clean(data), indent=2, sort_keys=False, allow_nan=False) + "\n"


def write_json(data: dict, path: str | Path) -> Path:
    """Write `data` as JSON atomically."""
    run_id = current_run_id()  # every file of an output set names its run (commit.py)
    with atomic_path(path) as tmp:
        tmp.write_text(dumps({**data, "run_id": run_id} if run_id else data), encoding="utf-8")
    return Path(path)
