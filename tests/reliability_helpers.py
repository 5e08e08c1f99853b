"""Helpers the reliability test files share: shipped catalog entries to edit, YAML files, and the tiny
scenario (a 2-layer, 256-wide model on one H100 architecture, every layout dimension pinned to 1: the
design space is 4 points, d ∈ {1, 2, 4, 8} dividing B = 8, small enough to enumerate)."""
from __future__ import annotations

import copy
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
DEFAULT = yaml.safe_load((REPO / "catalogs" / "default.yaml").read_text(encoding="utf-8"))


def catalog_entry(kind: str, ident: str) -> dict:
    """A deep copy of one shipped catalog entry, to edit in an override file."""
    return copy.deepcopy(next(e for e in DEFAULT[kind] if e["id"] == ident))


def write_yaml(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def tiny_scenario(**changes) -> dict:
    """A 2-layer, 256-wide model on one H100 architecture with every layout dimension pinned to 1: the design
    space is 4 points (d ∈ {1, 2, 4, 8} divides B = 8), small enough to enumerate; `changes` replace its
    top-level keys."""
    sc = {
        "name": "tiny",
        "workload": {"model": {"layers": 2, "hidden_size": 256, "ffn_hidden_size": 1024, "attention_heads": 4,
                               "vocab_size": 1024, "seq_len": 256}, "global_batch_size": 8},
        "target": {"step_time_s": 1.0},
        # nic_configurations: any — one rail of cx7-ndr on hgx-h100 is no reference NIC configuration (the
        # default design space holds only those since issue 24); these tests are about statuses, outputs
        # and limits, not the configuration, so the scenario opens the catalog's configurations.
        "constraints": {"platforms": ["hgx-h100"], "nics": ["cx7-ndr"], "switches": ["qm9700"], "rails_per_node": [1],
                        "nic_configurations": "any"},
        "parallelism": {"tp": 1, "cp": 1, "pp": 1, "vp": 1, "microbatch_size": 1},
        "top_k": 1,
    }
    sc.update(changes)
    return sc
