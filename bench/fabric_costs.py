"""Network cost per GPU endpoint of each fabric family (issue 15): the table in docs/model.md.

    python bench/fabric_costs.py        # prints the markdown tables

For 2,048 / 16,384 / 65,536 / 131,072 GPUs with one NIC per GPU, each family is sized by its module
(solver/fabrics) and priced by the bill of materials (solver/costing/table.py) on the shipped catalog:
switches + cables + the modules at both ends of every link (NICs, racks and compute excluded).
A second column prices the same switch and switch-to-switch link counts at DeepSeek's implied
ISCA '25 unit prices ($83,008 per switch, $503.5 per link, docs/sources.md §fabrics), the way its
Table 3 ($4.39k FT2 / MPFT, $7.5k FT3) counts. tests/fabrics/test_cost_table.py keeps docs/model.md
equal to this output.
"""
from __future__ import annotations

from functools import cache

from solver.costing import design_cost
from solver.inputs import load_catalog
from solver.inputs.schema import Scenario

GPUS = (2_048, 16_384, 65_536, 131_072)
FAMILIES = ("fat-tree", "multi-plane", "rail-only")
# (label, platform, NIC, NICs per node, switch): one NIC per GPU
PARTS = {
    "NDR": ("8-GPU servers, 8 × ConnectX-7 NDR, QM9700 (64 × 400G)", "hgx-h100", "cx7-ndr", 8, "qm9700"),
    "XDR": ("8-GPU servers, 8 × ConnectX-8 XDR, Q3400 (144 × 800G)", "dgx-b300", "cx8-xdr", 8, "q3400"),
    "NDR NVL72": ("GB200 NVL72 racks, 4 × ConnectX-7 per tray, QM9700", "gb200-nvl72", "cx7-ndr", 4, "qm9700"),
    "XDR NVL72": ("GB300 NVL72 racks, 4 × ConnectX-8 per tray, Q3400", "gb300-nvl72", "cx8-xdr", 4, "q3400"),
}
USD_PER_SWITCH, USD_PER_LINK = 83_008, 503.5


@cache
def _catalog():
    return load_catalog()


@cache
def _scenario() -> Scenario:
    """Any scenario: only its spares (none: `reliability.spares: false`) and contingency (0) reach the bill of
    materials."""
    return Scenario.model_validate({"name": "fabric-costs", "target": {"step_time_s": 1.0},
                                    "reliability": {"spares": False}, "workload": {
        "model": {"layers": 1, "hidden_size": 64, "ffn_hidden_size": 64, "attention_heads": 1, "vocab_size": 64,
                  "seq_len": 64}, "global_batch_size": 1}})


def cost_per_endpoint(parts: str, family: str, gpus: int) -> tuple[float, float, int] | None:
    """(catalog $ per endpoint, DeepSeek-priced $ per endpoint, tiers), or None when the family
    cannot build that many endpoints. NVL72 sizes are whole racks: ⌈gpus/72⌉."""
    _, platform, nic, rails, switch = PARTS[parts]
    catalog = _catalog()
    plat = catalog.by_id("platforms")[platform]
    domains = -(-gpus // plat.gpus_per_domain)
    design = design_cost(_scenario(), catalog, platform, nic, rails, switch, 1.0, domains, None, family)
    if design is None:
        return None
    f = design.fabric
    network = sum(line.extended_usd for line in design.bom if line.category in ("switch", "link"))
    deepseek = f.total_switches * USD_PER_SWITCH + (f.links["leaf_spine"] + f.links["spine_core"]) * USD_PER_LINK
    return network / f.endpoints, deepseek / f.endpoints, f.tiers


def table(parts: str) -> str:
    label = PARTS[parts][0]
    head = "| GPUs | " + " | ".join(f"{fam}: catalog $ (DeepSeek $), tiers" for fam in FAMILIES) + " |"
    rows = [f"{label}:", "", head, "|---|" + "---|" * len(FAMILIES)]
    for gpus in GPUS:
        cells = []
        for fam in FAMILIES:
            got = cost_per_endpoint(parts, fam, gpus)
            cells.append("—" if got is None else f"{got[0]:,.0f} ({got[1]:,.0f}), {got[2]}")
        rows.append(f"| {gpus:,} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def tables() -> str:
    return "\n\n".join(table(parts) for parts in PARTS)


if __name__ == "__main__":
    print(tables())
