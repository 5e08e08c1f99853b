"""A non-editable wheel carries the shipped default catalog (issue 2, item 4).

Builds the wheel, installs it into a fresh venv that reuses the installed dependencies, and runs
`fabricplan catalog --json` from a folder outside the repository: the catalog must come from the
installed package, not from the source tree.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_installs_and_loads_the_shipped_catalog(tmp_path):
    def sh(*args, cwd=tmp_path):
        proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, f"{args}: {proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        return proc

    wheels = tmp_path / "wheels"
    sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, ROOT)
    [wheel] = wheels.glob("fabricplan-*.whl")
    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", "--system-site-packages", venv)
    sh(venv / "bin" / "python", "-m", "pip", "install", "--no-deps", "-q", wheel)

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    proc = sh(venv / "bin" / "fabricplan", "catalog", "--json", cwd=outside)
    data = json.loads(proc.stdout)
    [source] = data["files"]
    catalog_path = Path(source["path"]).resolve()
    # installed as solver/catalogs/default.yaml inside the venv's site-packages
    assert catalog_path.is_relative_to(venv.resolve()), catalog_path
    assert catalog_path.parts[-3:] == ("solver", "catalogs", "default.yaml")
    assert catalog_path.read_bytes() == (ROOT / "catalogs" / "default.yaml").read_bytes()
    assert {"h100-sxm", "gb200"} <= {g["id"] for g in data["gpus"]}

    # the venv's solver package is the installed copy, not the editable source tree
    proc = sh(venv / "bin" / "python", "-c", "import solver; print(solver.__file__)", cwd=outside)
    assert Path(proc.stdout.strip()).resolve().is_relative_to(venv.resolve())
