"""A non-editable wheel carries the shipped default catalog (issue 2, item 4).

Builds the wheel from a copy of the checkout (so no build/ folder appears in it), installs it into
a fresh folder that the running interpreter imports first, and runs `fabricplan catalog --json` from
a folder outside the repository: the catalog must come from the installed package, not from the
source tree. This works the same from the system Python and from inside a virtual environment.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_installs_and_loads_the_shipped_catalog(tmp_path):
    """Works from the system Python and from inside a virtual environment alike: the wheel goes into
    a fresh folder first on PYTHONPATH, beside the dependencies the running interpreter already has."""
    site = tmp_path / "site"
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHONPATH": str(site)}

    def sh(*args, cwd=tmp_path):
        proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL, env=env)
        assert proc.returncode == 0, f"{args}: {proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        return proc

    # Build from a copy: pip builds in the source folder, and the checkout must not gain a build/ folder.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "outputs", "*.egg-info", "__pycache__",
                                                              ".hypothesis", ".pytest_cache"))
    wheels = tmp_path / "wheels"
    sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, source)
    [wheel] = wheels.glob("fabricplan-*.whl")
    sh(sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", site, wheel)

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    proc = sh(site / "bin" / "fabricplan", "catalog", "--json", cwd=outside)
    data = json.loads(proc.stdout)
    [source_file] = data["files"]
    catalog_path = Path(source_file["path"]).resolve()
    # installed as solver/catalogs/default.yaml inside the install folder
    assert catalog_path.is_relative_to(site.resolve()), catalog_path
    assert catalog_path.parts[-3:] == ("solver", "catalogs", "default.yaml")
    assert catalog_path.read_bytes() == (ROOT / "catalogs" / "default.yaml").read_bytes()
    assert {"h100-sxm", "gb200"} <= {g["id"] for g in data["gpus"]}
    assert not (ROOT / "build").exists(), "building the wheel must not leave build/ in the checkout"

    # the installed copy is the one imported, not the editable source tree
    proc = sh(sys.executable, "-c", "import solver; print(solver.__file__)", cwd=outside)
    assert Path(proc.stdout.strip()).resolve().is_relative_to(site.resolve())
