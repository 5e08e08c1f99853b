"""The solve workbook's "Cables" sheet: the cable and optics schedule per design and fabric tier
(which link option, copper or optical, the planned run length against its reach, and how many
cables and modules at each end), read off the bill of materials so it always agrees with it.
"""
from __future__ import annotations

from .xlsx import NUMBER, header_row, note, print_setup, put, set_widths, wrap, write_title

SHEET = "Cables"
HEADER_ROW = 4
HEADERS = ("Design", "Tier", "Link option", "Medium", "Length class", "Cables", "Switch-end modules",
           "Far-end modules", "Cable")
WIDTHS = {"A": 9, "B": 11, "C": 22, "D": 9, "E": 22, "F": 9, "G": 11, "H": 10, "I": 48}


def cable_rows(design, catalog) -> list[dict]:
    """One row per tier and link option the design's BOM uses: tier, medium, length class and counts. The tier is
    the family's link name (a link line's BOM role, "<link> cable" / "<link> switch-end module" / …), the rows in
    the family's tier order (`FabricSize.vocabulary`); the planned length is the facility's for the catalog link
    key the option builds."""
    links = catalog.by_id("links")
    distance = catalog.facility.link_distance_m if catalog.facility is not None else None
    order = design.cost.fabric.vocabulary.link_names
    rows: dict[tuple[str, str], dict] = {}
    for line in design.cost.bom:
        if line.category != "link" or line.part not in links:
            continue
        link = links[line.part]
        tier, _, piece = line.role.partition(" ")
        row = rows.setdefault((tier, line.part), {"tier": tier, "link": link.id, "medium": link.medium,
                                                  "planned_m": getattr(distance, link.tier, None) if distance else None,
                                                  "reach_m": link.max_reach_m, "cables": 0, "switch_end": 0,
                                                  "far_end": 0, "cable": ""})
        if piece == "switch-end module":
            row["switch_end"] += line.quantity
        elif piece == "far-end module":
            row["far_end"] += line.quantity
        else:
            row["cables"] += line.quantity
            row["cable"] = line.description.split(": ", 1)[-1]
    return sorted(rows.values(), key=lambda r: (order.index(r["tier"]) if r["tier"] in order else 9, r["link"]))


def length_class(row: dict) -> str:
    planned = "" if row["planned_m"] is None else f"≤ {row['planned_m']:g} m planned, "
    return f"{planned}reach {row['reach_m']:g} m"


def write_cables_sheet(wb, result, catalog) -> bool:
    """The sheet, when a design has links (False: no sheet written)."""
    per_design = [(d, cable_rows(d, catalog)) for d in result.designs]
    if not any(rows for _, rows in per_design):
        return False
    ws = wb.create_sheet(SHEET)
    write_title(ws, "Cable and optics schedule")
    note(ws, 2, "Per design and tier: the link option of the BOM, its run length (facility link_distance_m) against "
                "its reach, and the cables and transceiver modules to order (a twin-port module serves two links).")
    header_row(ws, HEADER_ROW, HEADERS, right=(6, 7, 8))
    r = HEADER_ROW
    for design, rows in per_design:
        for row in rows:
            r += 1
            values = (f"#{design.rank}", row["tier"], row["link"], row["medium"], length_class(row), row["cables"],
                      row["switch_end"], row["far_end"], row["cable"])
            for c, value in enumerate(values, start=1):
                put(ws, r, c, value, NUMBER if c in (6, 7, 8) else None)
            wrap(ws, r, 9, WIDTHS["I"])
    set_widths(ws, WIDTHS)
    ws.freeze_panes = f"A{HEADER_ROW + 1}"
    # printed at 100 % across two landscape pages (about 1,050 pt of columns), Design and Tier on both
    print_setup(ws, pages_wide=2, title_rows=f"{HEADER_ROW}:{HEADER_ROW}", title_cols="A:B")
    return True
