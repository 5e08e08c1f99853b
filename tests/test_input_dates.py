"""Impossible dates and same-date site phases are refused (issue 47s): every date field (`schema_base.Date`: catalog
`price_date`, lifecycle `available_from` / `orderable_until`, site `energised` and `at`, an ownership figure's
`price_date`) is a YYYY, YYYY-MM or YYYY-MM-DD date ON the calendar, and a site gives one power per energisation date.
Each refusal names file:line:column and the field, exit code 2, nothing written."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from solver.inputs.schema_base import real_date

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "scenarios" / "site-50mw.yaml"


def validate(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver", "validate", path.name], cwd=path.parent,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def refused(proc: subprocess.CompletedProcess, where: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert where in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("value", ["2026", "2026-01", "2026-12", "2024-02-29", "2026-04-30", "2026-12-31"])
def test_calendar_dates_pass(value):
    assert real_date(value) == value


@pytest.mark.parametrize("value, why", [("2026-13", "month 13 is not 01–12"), ("2026-00", "month 00 is not 01–12"),
                                        ("2026-02-29", "February 2026 has days 01–28"),
                                        ("2026-04-31", "April 2026 has days 01–30"),
                                        ("2026-01-00", "January 2026 has days 01–31")])
def test_impossible_dates_are_refused(value, why):
    with pytest.raises(ValueError, match=why):
        real_date(value)


def test_a_site_phase_energised_in_month_13_is_refused_with_its_line(tmp_path):
    text = SITE.read_text(encoding="utf-8")
    assert '    - {energised: "2026-06", power_mw: 20}' in text.splitlines()[48]  # line 49 of the shipped site
    bad = tmp_path / "site.yaml"
    bad.write_text(text.replace('energised: "2026-06"', 'energised: "2026-13"'), encoding="utf-8")
    refused(validate(bad), "site.yaml:49:8: site.power[0].energised: '2026-13' is not a date: month 13")


def test_a_site_at_date_off_the_calendar_is_refused(tmp_path):
    bad = tmp_path / "site.yaml"
    bad.write_text(SITE.read_text(encoding="utf-8").replace('at: "2027-06"', 'at: "2027-06-31"'), encoding="utf-8")
    refused(validate(bad), "site.yaml:51:3: site.at: '2027-06-31' is not a date: June 2027 has days 01–30")


def test_a_catalog_price_date_in_month_13_is_refused(tmp_path):
    layer = tmp_path / "quote.yaml"
    layer.write_text("name: quote\nswitches:\n  - id: q3400\n    unit_price_usd: 1000\n    price_source: test\n"
                     "    price_date: \"2026-13\"\n", encoding="utf-8")
    refused(validate(layer), "quote.yaml:6:5: switches[0].price_date: '2026-13' is not a date")


def test_a_lifecycle_window_off_the_calendar_is_refused(tmp_path):
    layer = tmp_path / "lc.yaml"
    layer.write_text("name: lc\nlifecycle:\n  - {id: h100-sxm, available_from: '2023', orderable_until: '2027-02-30', "
                     "source: test}\n", encoding="utf-8")
    refused(validate(layer), "lifecycle[0].orderable_until: '2027-02-30' is not a date: February 2027 has days 01–28")


def test_two_site_phases_on_one_date_are_refused(tmp_path):
    bad = tmp_path / "site.yaml"
    bad.write_text(SITE.read_text(encoding="utf-8").replace('energised: "2027-06"', 'energised: "2026-06"'),
                   encoding="utf-8")
    refused(validate(bad), "site.yaml:48:3: site.power: phases 0 and 1 (from 0) are both energised on 2026-06 "
                           "(20 MW and 50 MW): give one phase per date")
