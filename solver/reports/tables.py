"""Width-aware rich tables (Column, make_table) and the cell texts every terminal report shares."""
from __future__ import annotations

import io
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ..perf.layout import expert_text

if TYPE_CHECKING:  # annotations only: `catalog` and `validate` load no design space (numpy)
    from ..results import Design


def usd_text(value: float) -> str:
    """Whole US dollars with thousands separators."""
    return f"${value:,.0f}"


def price_text(item, text: str | None = None) -> str:
    """A catalog price, flagged when the catalog marks it as an estimate."""
    return (text or usd_text(item.unit_price_usd)) + (" est." if item.price_is_estimate else "")


def gb_text(value: float) -> str:
    """Bytes as GB with one decimal."""
    return f"{value / 1e9:,.1f} GB"


# ------------------------------------------------------------------------- width-aware tables


@dataclass
class Column:
    """One table column: numbers are never wrapped or cut (min width = their longest cell); text
    columns wrap within `min_width`. Columns are dropped from the highest `drop` rank first when the
    terminal is too narrow (0 = always shown)."""

    header: str
    cells: list[str]
    number: bool = True
    drop: int = 0
    min_width: int = 10

    def width(self) -> int:
        """Room the column takes: a number column never wraps, its header included (rich's no_wrap
        holds for the header too), so it takes its longest cell or its whole header."""
        cells = [len(_MARKUP.sub("", c)) for c in self.cells]
        if self.number:
            return max(cells + [len(line) for line in self.header.split("\n")] + [1])
        return min(max(cells + [len(w) for w in self.header.split()] + [1]), self.min_width)


_MARKUP = re.compile(r"\[/?[a-z ]*\]")  # rich style tags take no room on screen
CELL_OVERHEAD = 3  # one space each side and one border per column (rich's default box)


def fit_columns(columns: list[Column], width: int | None, wide: bool = False) -> list[Column]:
    """The columns to show at `width` characters: every column when `wide` or when they fit, else
    drop the least important (highest `drop`) until the rest fit; numbers keep their full width."""
    if wide or width is None:
        return columns
    shown = list(columns)
    for rank in sorted({c.drop for c in columns if c.drop > 0}, reverse=True):
        if _table_width(shown) <= width:
            break
        shown = [c for c in shown if c.drop != rank]
    return shown


def narrowed(shown: list[Column], width: int, floor: int = 6) -> list[Column]:
    """When the columns left still do not fit, the text columns wrap narrower (down to `floor`
    characters), widest first, so that rich never has to crop a number."""
    out = list(shown)
    while _table_width(out) > width:
        text = [i for i, c in enumerate(out) if not c.number and c.width() > floor]
        if not text:
            break
        i = max(text, key=lambda j: out[j].width())
        out[i] = replace(out[i], min_width=out[i].width() - 1)
    return out


def _table_width(columns: list[Column]) -> int:
    return sum(c.width() + CELL_OVERHEAD for c in columns) + 1


def stacked_header(column: Column) -> str:
    """A number column's header on several lines (at spaces, after dots and underscores), none wider than the
    column's longest cell or longest word: "facility kW" → "facility\nkW"."""
    cells = max([len(_MARKUP.sub("", c)) for c in column.cells] + [1])
    # a sweep axis breaks after _ too, a layout after its dots (tp·cp·…)
    words = re.findall(r"[^ ./_·]+[./_·]?", column.header.replace("\n", " "))
    widest = max([cells] + [len(w) for w in words])
    lines: list[str] = []
    for word in words:
        joined = (lines[-1] + ("" if lines[-1].endswith((".", "/", "_", "·")) else " ") + word) if lines else word
        if lines and len(joined) <= widest:
            lines[-1] = joined
        else:
            lines.append(word)
    return "\n".join(lines) or column.header


def make_table(title: str, columns: list[Column], width: int | None, wide: bool = False,
               footer: list[str] | None = None) -> Table:
    if not wide and width is not None and _table_width(columns) > width:
        # too wide: first stack the headers of number columns on as many lines as they need
        columns = [replace(c, header=stacked_header(c)) if c.number else c for c in columns]
    shown = fit_columns(columns, width, wide)
    if not wide and width is not None:
        shown = narrowed(shown, width)
    t = _build(title, columns, shown)
    # each table is drawn once to learn whether it fits (not once more to learn it again: a solve's table took
    # 0.01-0.02 s a drawing)
    done = wide or width is None or _renders_within(t, width)
    if not done:
        assert width is not None
        shown, t = _squeezed(title, columns, shown, width)
        done = len(shown) <= 2 or _renders_within(t, width)
    while not done:
        assert width is not None
        # last resort (rich keeps unbreakable words such as part ids whole): leave out the least important
        # column still shown (highest `drop`), else the last one (the caption names it), never crop
        ranked = [c for c in shown if c.drop > 0]
        victim = max(reversed(ranked), key=lambda c: c.drop) if ranked else shown[-1]
        shown = [c for c in shown if c is not victim]
        t = _build(title, columns, shown)
        done = len(shown) <= 2 or _renders_within(t, width)
    return t


def _squeezed(title: str, columns: list[Column], shown: list[Column], width: int, floor: int = 3):
    """Before any column is left out for rich's sake (it keeps a short word such as "optimal" whole), the text
    columns wrap narrower still, one character at a time down to `floor`, the widest first (issue 45: the
    sweep's capex and the plan's decisions were dropped at 80 columns for want of one character)."""
    out = list(shown)
    t = _build(title, columns, out)
    for _ in range(40):
        if _renders_within(t, width):
            break
        text = [i for i, c in enumerate(out) if not c.number and min(c.min_width, c.width()) > floor]
        if not text:
            break
        i = max(text, key=lambda j: min(out[j].min_width, out[j].width()))
        out[i] = replace(out[i], min_width=min(out[i].min_width, out[i].width()) - 1)
        t = _build(title, columns, out)
    return (out, t) if _renders_within(t, width) else (shown, _build(title, columns, shown))


def _build(title: str, columns: list[Column], shown: list[Column]) -> Table:
    t = Table(title=title, title_justify="left")
    for c in shown:
        if c.number:
            t.add_column(c.header, justify="right", no_wrap=True, min_width=c.width())
        else:
            t.add_column(c.header, justify="left", overflow="fold", min_width=min(c.min_width, c.width()))
    rows = len(columns[0].cells) if columns else 0
    for i in range(rows):
        t.add_row(*(c.cells[i] for c in shown))
    kept = {c.header for c in shown}
    hidden = [unstacked_header(c.header) for c in columns if c.header not in kept]
    if hidden:
        t.caption = f"narrow terminal: {', '.join(hidden)} not shown (--wide shows them)"
        t.caption_justify = "left"
    return t


def unstacked_header(header: str) -> str:
    """A header on one line again: a line `stacked_header` broke after a dot, slash, underscore or middle dot joins
    the next without a space ("out tok/\\ns/GPU" → "out tok/s/GPU"); other line breaks become spaces."""
    return " ".join(re.sub(r"([./_·])\n", r"\1", header).split())


def _renders_within(table: Table, width: int) -> bool:
    """Whether rich draws the whole table in `width` columns (its top-right corner is on the screen)."""
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    with console.capture() as capture:
        console.print(table)
    top = next((line for line in capture.get().splitlines() if line.startswith("┏")), "┓")
    return top.rstrip().endswith("┓")


def design_layout(d: Design) -> str:
    """A design's layout as tp·cp·pp·vp·dp·microbatch (and its expert parallelism)."""
    lay = d.layout
    return f"{lay.tp}·{lay.cp}·{lay.pp}·{lay.vp}·{lay.dp}·{lay.microbatch_size}" + expert_text(lay)


def step_text(d: Design) -> str:
    """The step time against its limit (target × goodput), or the step time alone for `fastest` without a target."""
    if d.objective == "fastest" and d.target_step_time_s == float("inf"):
        return f"{d.perf.step_time_s:.2f}"
    return f"{d.perf.step_time_s:.2f} / {d.effective_target_s:.2f}"  # the limit: target × goodput when it applies
