"""`fabricplan --help` prints through argparse and loads no third-party library (issue speed: it loaded rich's
markup through `reports.text`, about 0.01 s of the 0.15 s the bench allows it)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import contextlib, io, json, sys
from solver.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(["--help"])
    except SystemExit:
        pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & {"rich", "pydantic", "yaml", "numpy", "pyomo"})))
"""


def test_help_loads_no_third_party_library(tmp_path):
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_safe_still_escapes_markup_and_shows_controls():
    from solver.reports.text import safe

    # tags escaped; ESC shown as text; "[31m" has no closing bracket, so it is no tag and stays as it is
    assert safe("[bold]x[/] \x1b[31m") == "\\[bold]x\\[/] \\x1b[31m"
