"""The evaluator's bill of materials, split out of `costing/table.py` (issue #26): the category table's
lines evaluated for integer quantities as `BomLine`s, each line split into its owned share (no price,
still powered) and its bought share, one line per fraction-of-hardware rule, the contingency line;
capex = Σ extended_usd, IT power = Σ quantity · power_w / 1000. `costing.bill_of_materials`
assembles them. This module imports nothing from table.py (`Line` and `Parts` come from lines.py), so no
cycle.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from .lines import Line, Parts
from .owned import Stock, price_category

# ----------------------------------------------------------------------------------- the evaluator's BOM


@dataclass(frozen=True)
class BomLine:
    """One bill-of-materials line; extended_usd = quantity · unit_price_usd; power_w is per unit."""

    category: str  # compute | spares | nic | switch | link | rack | contingency
    part: str
    description: str
    quantity: int
    unit_price_usd: float
    extended_usd: float
    power_w: float
    price_source: str
    price_date: str
    price_is_estimate: bool
    owned: bool = False  # reused from the scenario's inventory: no capex, still powered
    included: bool = False  # paid for in the unit price (uncabled on-board NICs, in-rack switches): $0
    role: str = ""  # what the line is in the design: "leaf switch", "node_leaf far-end module" (bom_role)
    part_number: str = ""  # the manufacturer's part number where the catalog has it ("" = not known)
    lead_time_weeks: float | None = None  # the catalog's quoted lead time (None = not known)

    def to_dict(self) -> dict:
        out = asdict(self)
        for flag in ("owned", "included", "part_number", "lead_time_weeks"):
            if not out[flag]:
                out.pop(flag)
        return out


_LINK_ROLE = re.compile(r"^(\w+) (cable|switch-end module|far-end module)\b")
_ROLES = {"compute": "compute", "spares": "spare", "nic": "scale-out NIC"}


def bom_role(category: str, description: str) -> str:
    """What a BOM line is, in a word or three: a link's "node_leaf cable" / "node_leaf switch-end module" /
    "node_leaf far-end module" (three lines share the link's id), a switch's or rack's role ("leaf switch",
    "network rack"), "compute" / "spare" / "scale-out NIC", else the category."""
    if category == "link":
        m = _LINK_ROLE.match(description)
        return f"{m.group(1)} {m.group(2)}" if m else "link"
    if category in ("switch", "rack") and ":" in description:
        return description.split(":", 1)[0]
    return _ROLES.get(category, category)


def _part_number(priced, role: str) -> str:
    """The line's manufacturer part number: a link's cable or module by its role, else the entry's own."""
    if role.endswith(" cable"):
        key = "cable_part_number"
    elif role.endswith("switch-end module"):
        key = "switch_end_module_part_number"
    elif role.endswith("far-end module"):
        key = "far_end_module_part_number"
    else:
        key = "manufacturer_part_number"
    return getattr(priced, key, None) or ""


LINE_FACTS_KEPT = 20_000  # (catalog entry, category, description) → its role, part number and lead time
_LINE_FACTS: dict[tuple[int, str, str], tuple[Any, str, str, float | None]] = {}


def _facts(line: Line) -> tuple[str, str, float | None]:
    """(role, part number, lead time) of a line: read off its catalog entry once per (entry, category, description)
    and kept with the entry (a pydantic attribute a model lacks costs an exception each time; the serving fleet's
    pools cost hundreds of designs of the same parts)."""
    p = line.priced
    key = (id(p), line.category, line.description)
    kept = _LINE_FACTS.get(key)
    if kept is None or kept[0] is not p:
        if len(_LINE_FACTS) >= LINE_FACTS_KEPT:
            _LINE_FACTS.clear()
        role = bom_role(line.category, line.description)
        kept = _LINE_FACTS[key] = (p, role, _part_number(p, role), getattr(p, "lead_time_weeks", None))
    return kept[1], kept[2], kept[3]


def _bom_line(line: Line, quantity: int) -> BomLine:
    p = line.priced
    role, part_number, lead_time_weeks = _facts(line)
    return BomLine(line.category, line.part, line.description, quantity, line.unit_price_usd,
                   quantity * line.unit_price_usd, line.power_w, p.price_source, p.price_date, p.price_is_estimate,
                   included=line.included, role=role, part_number=part_number, lead_time_weeks=lead_time_weeks)


def _owned_line(line: Line, quantity: int) -> BomLine:
    """The owned share of a line: no price, its power still counted."""
    role, part_number, _ = _facts(line)
    return BomLine(line.category, line.part, f"owned: {line.description}", quantity, 0.0, 0.0, line.power_w,
                   "owned (scenario inventory)", "", False, owned=True, role=role, part_number=part_number)


def split_owned(lines: list[Line], stock: dict[str, Stock]) -> list[BomLine]:
    """Each line split into its owned share and its bought share (`stock`: the lines' `stock_of`); a key's owned
    units go to its lines in table order (compute before spares, leaf before spine, compute racks before network)."""
    left = {key: st.owned for key, st in stock.items()}
    out = []
    for line in lines:
        key = line.key
        reused = min(line.quantity, left[key]) if left[key] else 0
        if reused > 0:
            left[key] -= reused
            out.append(_owned_line(line, reused))
        out.append(_bom_line(line, line.quantity - reused))
    return out


def fraction_lines(parts: Parts, lines: list[BomLine]) -> list[BomLine]:
    """One line per fraction-of-hardware rule: fraction · Σ extended of the hardware lines bought."""
    hardware = sum(line.extended_usd for line in lines if price_category(line.category) != "extra")
    return [BomLine("extra", e.name, f"{e.name}: {e.fraction_of_hardware:.1%} of the hardware lines"
                    + (f" ({e.description})" if e.description else ""), 1, e.fraction_of_hardware * hardware,
                    e.fraction_of_hardware * hardware, 0.0, e.price_source, e.price_date, e.price_is_estimate)
            for e in parts.extras if e.fraction_of_hardware is not None]


def contingency_line(lines: list[BomLine], contingency_fraction: float) -> BomLine:
    """contingency = fraction · Σ extended_usd of the other lines (one line, quantity 1)."""
    amount = contingency_fraction * sum(line.extended_usd for line in lines)
    return BomLine("contingency", "contingency", f"contingency {contingency_fraction:.1%} of the lines above",
                   1, amount, amount, 0.0, "scenario constraints.contingency_fraction", "", True)

def capex_usd(bom: list[BomLine]) -> float:
    """capex = Σ extended_usd."""
    return sum(line.extended_usd for line in bom)


def it_power_kw(bom: list[BomLine]) -> float:
    """IT power = Σ quantity · power_w / 1000."""
    return sum(line.quantity * line.power_w for line in bom) / 1000.0
