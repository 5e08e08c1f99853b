"""docs/model.md's network-cost-per-endpoint table is the output of bench/fabric_costs.py (issue 15):
the numbers in the documentation are the code's, on the shipped catalog, and the DeepSeek-priced
cells reproduce ISCA '25 Table 3 (docs/sources.md [F1]: $4.39k for FT2 and MPFT, $7.5k for FT3)."""
from __future__ import annotations

import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import fabric_costs  # noqa: E402


def test_docs_table_is_the_generated_one():
    text = (REPO / "docs" / "model.md").read_text(encoding="utf-8")
    begin, end = "<!-- fabric cost table: begin -->\n", "\n<!-- fabric cost table: end -->"
    documented = text[text.index(begin) + len(begin):text.index(end)]
    assert documented == fabric_costs.tables(), "regenerate with: python bench/fabric_costs.py"


def test_deepseek_priced_cells_reproduce_table_3():
    # NDR, 8 NICs per 8-GPU node, 64-port switches: 2,048 GPUs on a 2-tier fat tree and 16,384 on
    # multi-plane cost (96·83,008 + 2,048·503.5)/2,048 = $4,394.5 per endpoint; 65,536 on a 3-tier
    # fat tree (5,120·83,008 + 131,072·503.5)/65,536 = $7,492.0 (docs/sources.md §fabrics).
    assert round(fabric_costs.cost_per_endpoint("NDR", "fat-tree", 2_048)[1], 1) == 4394.5
    assert round(fabric_costs.cost_per_endpoint("NDR", "multi-plane", 16_384)[1], 1) == 4394.5
    assert round(fabric_costs.cost_per_endpoint("NDR", "fat-tree", 65_536)[1], 1) == 7492.0
    assert fabric_costs.cost_per_endpoint("NDR", "fat-tree", 131_072) is None  # > k³/4 endpoints
