"""The console entry holds the cyclic garbage collector during its start-up (issue 26): `cli.run` turns it off,
and the command turns it back on, with the start-up's objects frozen, once its inputs are loaded (`_load`) or at
the start of a command that loads none (calibrate). The library and `cli.main` leave it alone."""
from __future__ import annotations

import gc
from pathlib import Path

import pytest

from solver import cli
from solver.cli import common as cli_common

INPUTS = Path(__file__).resolve().parent / "data" / "inputs"


@pytest.fixture
def collector():
    """Restore the collector as it was (enabled, nothing frozen) whatever the test did."""
    yield
    cli_common._collector_held = False
    gc.unfreeze()
    gc.enable()


def test_run_holds_the_collector_while_main_starts(monkeypatch, collector):
    seen = {}

    def fake_main():
        seen["enabled"] = gc.isenabled()
        return 7

    monkeypatch.setattr(cli, "main", fake_main)
    monkeypatch.setattr(cli.os, "_exit", lambda code: (_ for _ in ()).throw(SystemExit(code)))
    with pytest.raises(SystemExit) as stop:
        cli.run()
    assert stop.value.code == 7
    assert seen == {"enabled": False}


def test_loading_the_inputs_releases_it_with_the_start_up_frozen(tmp_path, collector):
    cli_common.hold_collector()
    assert not gc.isenabled()
    code = cli.main(["solve", str(INPUTS / "mini-scenario.yaml"), "--no-xlsx", "--json", str(tmp_path / "r.json")])
    assert code in (0, 1)
    assert gc.isenabled()
    assert not cli_common._collector_held


def test_release_freezes_what_the_start_up_made(collector):
    cli_common.hold_collector()
    cli_common.release_collector()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 1000  # the modules imported so far, at the least
    gc.unfreeze()
    cli_common.release_collector()  # a second release does nothing
    assert gc.get_freeze_count() == 0


def test_an_input_error_keeps_it_held_until_the_exit(tmp_path, collector):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\n", encoding="utf-8")
    cli_common.hold_collector()
    assert cli.main(["solve", str(bad), "--no-xlsx", "--json", str(tmp_path / "r.json")]) == 2
    assert not gc.isenabled()  # the process ends at once: nothing to collect


def test_calibrate_releases_it_at_its_start(monkeypatch, collector):
    seen = {}

    def fake_calibrate(args, out, paths, *rest):  # run_calibrate(args, out, paths, err) since issue 44
        seen["enabled"] = gc.isenabled()
        return 0

    import solver.calibration.command as command

    monkeypatch.setattr(command, "run_calibrate", fake_calibrate)
    cli_common.hold_collector()
    assert cli.main(["calibrate", "runs.csv", "-o", "overlay.yaml"]) == 0
    assert seen == {"enabled": True}


def test_main_alone_leaves_the_collector_alone(tmp_path, collector):
    before = gc.get_freeze_count()
    code = cli.main(["solve", str(INPUTS / "mini-scenario.yaml"), "--no-xlsx", "--json", str(tmp_path / "r.json")])
    assert code in (0, 1)
    assert gc.isenabled()
    assert gc.get_freeze_count() == before


def test_validate_releases_it_before_reading_the_files(monkeypatch, collector):
    seen = {}
    import solver.inputs as inputs

    def fake_read_yaml(path):
        seen["enabled"] = gc.isenabled()
        raise KeyboardInterrupt  # stop here: only the collector's state matters

    monkeypatch.setattr(inputs, "read_yaml", fake_read_yaml)
    cli_common.hold_collector()
    with pytest.raises(KeyboardInterrupt):
        cli.cmd_validate(type("Args", (), {"paths": ["x.yaml"]})(), None, None)
    assert seen == {"enabled": True}
