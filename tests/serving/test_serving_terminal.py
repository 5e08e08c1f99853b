"""The serving fleet on a real pseudo-terminal at 80 and 120 columns: the money (each fleet's capex, its $ per million
output tokens, #1's pool capex) and the decisions (GPUs, each pool's role, platform and replicas, TTFT and TPOT) are
printed whole; only the intervals, TCO, tokens/s per GPU and kW may give way (and say so). Figures come from the JSON
the same run wrote, never from this test."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from test_planner_cli import run_in_pty  # noqa: E402

REPO = Path(__file__).resolve().parent.parent.parent
SCENARIO = REPO / "scenarios" / "serve-llama3-70b-chat.yaml"


@pytest.mark.parametrize("columns", [80, 120])
def test_fleet_money_and_decisions_are_never_dropped(columns, tmp_path):
    screen = run_in_pty(["solve", SCENARIO, "--json", "r.json", "--no-xlsx"], columns, tmp_path)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["designs"]
    for d in data["designs"]:
        assert f"${d['capex_usd']:,.0f}" in screen
        assert f"{d['serving']['usd_per_million_output_tokens']:.3f}" in screen
        assert f"{d['serving']['ttft_p90_s']:.2f}" in screen
        assert f"{d['serving']['tokens_per_s_per_user']:.1f}" in screen
    best = data["designs"][0]["serving"]
    for pool in best["pools"]:
        assert pool["role"] in screen and pool["platform"] in screen
        assert f"${pool['capex_usd']:,.0f}" in screen  # dropped at 80 columns before (issue 45 item 3)
        if pool["tpot_ms"] is not None:
            assert f"{pool['tpot_ms']:.1f}" in screen
    assert all(len(line) <= columns for line in screen.splitlines())
    if columns == 80:
        assert "not shown (--wide shows them)" in screen
