"""The console entry (solver/entry.py): Ctrl-C while the command's modules load ends as a Ctrl-C during the command
does, with the interrupted message and exit 130, not a traceback."""
from __future__ import annotations

import sys
import tomllib
import types
from pathlib import Path

import pytest

from solver import cli, entry

ROOT = Path(__file__).resolve().parent.parent


class _Exit(Exception):
    def __init__(self, code):
        self.code = code


def _no_exit(monkeypatch):
    def fake_exit(code):
        raise _Exit(code)

    monkeypatch.setattr(entry.os, "_exit", fake_exit)  # os._exit itself: entry.os and cli.os are the os module


def test_the_console_script_and_python_m_go_through_the_entry():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"fabricplan": "solver.entry:run"}
    assert "from .entry import run" in (ROOT / "solver" / "__main__.py").read_text(encoding="utf-8")


def test_ctrl_c_while_the_command_line_module_loads(monkeypatch, capsys):
    loading = types.ModuleType("solver.cli")

    def interrupted_import(name):
        raise KeyboardInterrupt

    loading.__getattr__ = interrupted_import  # `from .cli import run` is interrupted
    monkeypatch.setitem(sys.modules, "solver.cli", loading)
    _no_exit(monkeypatch)
    with pytest.raises(_Exit) as stop:
        entry.run()
    assert stop.value.code == 130
    assert capsys.readouterr().err == "interrupted: nothing was written\n"


def test_ctrl_c_before_the_command_starts(monkeypatch, capsys):
    def interrupted_main():
        raise KeyboardInterrupt  # e.g. while the arguments are parsed or rich loads

    monkeypatch.setattr(cli, "main", interrupted_main)
    monkeypatch.setattr(cli, "hold_collector", lambda: None)
    _no_exit(monkeypatch)
    with pytest.raises(_Exit) as stop:
        entry.run()
    assert stop.value.code == 130
    assert capsys.readouterr().err == "interrupted: nothing was written\n"


def test_without_the_entry_the_interrupt_is_raised(monkeypatch):
    def interrupted_main():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "main", interrupted_main)
    monkeypatch.setattr(cli, "hold_collector", lambda: None)
    _no_exit(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        cli.run()


def test_a_normal_run_exits_with_the_command_s_code(monkeypatch):
    monkeypatch.setattr(cli, "main", lambda: 3)
    monkeypatch.setattr(cli, "hold_collector", lambda: None)
    _no_exit(monkeypatch)
    with pytest.raises(_Exit) as stop:
        entry.run()
    assert stop.value.code == 3


def test_the_entry_s_exit_code_is_the_command_line_s():
    # entry.py keeps its own copy (importing cli/common.py would load rich before the Ctrl-C guard is in place)
    from solver.cli.common import EXIT_INTERRUPTED

    assert entry.EXIT_INTERRUPTED == EXIT_INTERRUPTED == 130
