"""The console entry (`fabricplan`, `python -m solver`): the command line of `cli.run`, and Ctrl-C at any moment of
the start-up, while the command's modules load, ends as a Ctrl-C during the command does (the interrupted
message, exit 130), not with a traceback. Nothing but the standard library is imported before `cli` is."""
from __future__ import annotations

import os
import sys

EXIT_INTERRUPTED = 130  # cli/common.py's EXIT_INTERRUPTED, which this module does not import (it loads rich)
INTERRUPTED_AT_START = "interrupted: nothing was written"


def interrupted_at_start() -> int:
    """Say so, and leave with exit 130 (no output file exists yet: none is opened before the command starts)."""
    try:
        sys.stderr.write(INTERRUPTED_AT_START + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return EXIT_INTERRUPTED


def run() -> None:
    try:
        from .cli import run as run_cli
    except KeyboardInterrupt:
        os._exit(interrupted_at_start())
    run_cli(interrupted_at_start)
