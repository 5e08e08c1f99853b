"""`tables.make_table` draws a table once to learn whether it fits the terminal, not twice (issue speed), and still
makes the same table at every width as the rule it had before: squeeze the text columns, then leave columns out."""
from __future__ import annotations

import io

import pytest
from rich.console import Console

from solver.reports import tables
from solver.reports.tables import Column, _build, _renders_within, _squeezed, fit_columns, make_table, narrowed


def _columns() -> list[Column]:
    ids = ["gb300-nvl72 · 4×cx8-xdr · q3400", "hgx-h100 · 8×cx7-ndr · qm9700", "dgx-b200 · 8×cx7-ndr · qm9700"]
    return [Column("#", ["1", "2", "3"]),
            Column("architecture", ids, number=False, min_width=30),
            Column("GPUs", ["4,608", "16,384", "1,024"]),
            Column("capex", ["$279,286,160", "$512,000,000", "$60,100,000"]),
            Column("layout tp·cp·pp·vp·dp·mbs", ["4·1·8·4·64·1", "8·1·16·1·128·1", "8·1·4·1·32·1"], drop=2),
            Column("facility kW", ["12,217", "25,000", "1,500"], drop=1),
            Column("notes", ["unbreakable-part-id-xxxxxxxxxxxxxxxx", "-", "-"], number=False, min_width=12, drop=3)]


def _as_before(title: str, columns: list[Column], width: int) -> object:
    """make_table as it was (issue 45), drawing the table again in the loop's test."""
    from dataclasses import replace

    if tables._table_width(columns) > width:
        columns = [replace(c, header=tables.stacked_header(c)) if c.number else c for c in columns]
    shown = narrowed(fit_columns(columns, width), width)
    t = _build(title, columns, shown)
    if not _renders_within(t, width):
        shown, t = _squeezed(title, columns, shown, width)
    while len(shown) > 2 and not _renders_within(t, width):
        ranked = [c for c in shown if c.drop > 0]
        victim = max(reversed(ranked), key=lambda c: c.drop) if ranked else shown[-1]
        shown = [c for c in shown if c is not victim]
        t = _build(title, columns, shown)
    return t


def _drawn(table, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    with console.capture() as capture:
        console.print(table)
    return capture.get()


@pytest.mark.parametrize("width", [250, 120, 100, 80, 60, 40, 24])
def test_the_same_table_at_every_width(width):
    assert _drawn(make_table("designs", _columns(), width), width) == _drawn(_as_before("designs", _columns(), width),
                                                                              width)


def test_a_table_that_fits_is_drawn_once(monkeypatch):
    calls = []
    real = tables._renders_within
    monkeypatch.setattr(tables, "_renders_within", lambda t, w: (calls.append(w), real(t, w))[1])
    make_table("designs", _columns(), 250)
    assert calls == [250]  # before: [250, 250]
    calls.clear()
    make_table("designs", _columns(), 250, wide=True)
    make_table("designs", _columns(), None)
    assert calls == []  # --wide, or no width: never drawn to check
