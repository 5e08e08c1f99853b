"""A number column's header is stacked on several lines when the terminal is narrow (`tables.stacked_header`); the
"narrow terminal: … not shown" caption names a dropped column on one line again (`tables.unstacked_header`)."""
from __future__ import annotations

import pytest

from solver.reports.tables import Column, stacked_header, unstacked_header


@pytest.mark.parametrize("header", ["out tok/s/GPU", "req/s cap.", "HBM GB/GPU", "facility kW",
                                    "layout tp·cp·pp·vp·dp·mbs", "tok/s/user p10–p90", "train_days"])
def test_a_stacked_header_reads_as_written_on_one_line(header):
    stacked = stacked_header(Column(header, ["1"]))  # one-character cells: a line per word
    assert "\n" in stacked
    assert unstacked_header(stacked) == header


def test_the_serving_caption_names_whole_headers():
    # before: "out tok/ s/GPU", "req/ s cap.", "HBM GB/ GPU" (the stacked lines joined with spaces)
    assert unstacked_header("out tok/\ns/GPU") == "out tok/s/GPU"
    assert unstacked_header("facility\nkW") == "facility kW"
