"""The input models' attribute docstrings (their fields' descriptions) are read off each module's source once and kept
beside its bytecode (solver/inputs/schema_base.py `_docstrings_in`): a later process reads them back instead of
parsing the source again, only while the source is the one they were read off, and nothing is kept where Python keeps
no bytecode (PYTHONDONTWRITEBYTECODE)."""
from __future__ import annotations

import json
import linecache
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

from solver.inputs import schema_base

SOURCE = '''
class Gpu:
    memory_gb: float
    """Memory per GPU, GB."""
    tdp_w: float = 700
    """Board power, W."""

    def method(self):
        x: int = 1
        return x
'''


def _parse(path: Path, monkeypatch, write: bool) -> dict:
    monkeypatch.setattr(sys, "dont_write_bytecode", not write)
    linecache.checkcache(str(path))
    return schema_base._docstrings_in.__wrapped__(str(path))


def test_docstrings_are_kept_beside_the_bytecode_and_read_back(tmp_path, monkeypatch):
    module = tmp_path / "models.py"
    module.write_text(SOURCE)
    found = _parse(module, monkeypatch, write=True)
    assert found == {"Gpu": [{"memory_gb": "Memory per GPU, GB.", "tdp_w": "Board power, W."}]}
    kept = tmp_path / "__pycache__" / f"models.{sys.implementation.cache_tag}.docstrings.json"
    assert kept.exists() and json.loads(kept.read_text())["classes"] == found
    # read back, not parsed again: a changed kept text (same source) is what the next read returns
    doc = json.loads(kept.read_text())
    doc["classes"] = {"Gpu": [{"memory_gb": "kept"}]}
    kept.write_text(json.dumps(doc))
    assert _parse(module, monkeypatch, write=True) == {"Gpu": [{"memory_gb": "kept"}]}
    # another source (an edited module): parsed again and kept anew
    module.write_text(SOURCE.replace("Board power, W.", "Thermal design power, W."))
    again = _parse(module, monkeypatch, write=True)
    assert again == {"Gpu": [{"memory_gb": "Memory per GPU, GB.", "tdp_w": "Thermal design power, W."}]}
    assert json.loads(kept.read_text())["classes"] == again


def test_a_broken_kept_file_is_parsed_over(tmp_path, monkeypatch):
    module = tmp_path / "models.py"
    module.write_text(SOURCE)
    kept = tmp_path / "__pycache__" / f"models.{sys.implementation.cache_tag}.docstrings.json"
    kept.parent.mkdir()
    kept.write_text("{not json")
    assert _parse(module, monkeypatch, write=True)["Gpu"][0]["tdp_w"] == "Board power, W."
    assert json.loads(kept.read_text())["classes"]["Gpu"][0]["tdp_w"] == "Board power, W."


def test_nothing_is_kept_without_bytecode(tmp_path, monkeypatch):
    module = tmp_path / "models.py"
    module.write_text(SOURCE)
    assert _parse(module, monkeypatch, write=False)["Gpu"][0]["memory_gb"] == "Memory per GPU, GB."
    assert not (tmp_path / "__pycache__").exists()


def test_a_fresh_process_with_the_kept_docstrings_describes_every_field_the_same(tmp_path):
    # Two fresh interpreters with bytecode on (the first keeps the docstrings, the second reads them): every input
    # model's field descriptions are the same as in this process, where they may have been parsed.
    from solver.inputs.schema import Catalog, Scenario

    probe = ("import json; from solver.inputs.schema import Catalog, Scenario; "
             "print(json.dumps([Catalog.model_json_schema(), Scenario.model_json_schema()]))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPO)
    here = json.loads(json.dumps([Catalog.model_json_schema(), Scenario.model_json_schema()]))
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path,
                             timeout=300)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == here
    assert list((REPO / "solver" / "inputs" / "__pycache__").glob("scenario_schema.*.docstrings.json"))
