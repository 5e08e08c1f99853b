"""Owned hardware and extra cost lines, checked against the catalog with located errors (SPEC §6.1).

An `inventory:` entry must name a part that can be bought (a platform, NIC, switch, link or rack),
and the owned parts must be able to work with each other: an owned NIC fits an owned platform, an
owned switch serves an owned NIC (or a NIC an owned platform carries), owned links are of an owned
switch's generation. A part the chosen design cannot use is reported as idle, not rejected; parts
that could never work together are an input error, because the user meant something else.
"""
from __future__ import annotations

import difflib
from typing import Any

from .schema import Catalog, Nic, Platform, Scenario, Switch
from .yaml_safe import Document

OWNABLE = ("platforms", "nics", "switches", "links", "racks")


def owned_kind(catalog: Catalog, ident: str) -> str | None:
    """The catalog kind (platforms, nics, switches, links, racks) an owned id names, or None."""
    return next((kind for kind in OWNABLE if ident in catalog.by_id(kind)), None)


def check_scenario_extras(doc: Document, sc: Scenario) -> None:
    """Extra cost lines have distinct names; an owned part's purchase year is not after the plan's start."""
    seen: dict[str, int] = {}
    for i, extra in enumerate(sc.extra_costs):
        if extra.name in seen:
            doc.problems.append(doc.problem(("extra_costs", i, "name"), f"extra cost '{extra.name}' is already "
                                            f"defined at extra_costs[{seen[extra.name]}]: give each line its own name",
                                            extra.name))
        seen.setdefault(extra.name, i)
    start = sc.plan.start_year if sc.plan is not None else None
    for ident, item in sc.inventory.items():
        if start is not None and item.purchase_year is not None and item.purchase_year > start:
            doc.problems.append(doc.problem(("inventory", ident, "purchase_year"), f"bought after the plan starts "
                                            f"(plan.start_year = {start}): an owned part is owned from the first period",
                                            item.purchase_year))


def check_inventory(doc: Document, sc: Scenario, catalog: Catalog) -> None:
    """Every owned id is a buyable catalog part, and the owned parts can work with each other."""
    kinds: dict[str, list[Any]] = {kind: [] for kind in OWNABLE}
    for ident in sc.inventory:
        kind = owned_kind(catalog, ident)
        if kind is None:
            doc.problems.append(doc.problem(("inventory", ident), _unknown_part(catalog, ident), ident))
        else:
            kinds[kind].append(catalog.by_id(kind)[ident])
    _check_nics(doc, kinds["platforms"], kinds["nics"])
    _check_switches(doc, kinds["platforms"], kinds["nics"], kinds["switches"], catalog)
    _check_links(doc, kinds["switches"], kinds["links"])


def _unknown_part(catalog: Catalog, ident: str) -> str:
    if ident in catalog.by_id("gpus"):
        users = sorted(p.id for p in catalog.platforms if p.gpu == ident)
        return ("GPUs are owned as the platforms that carry them (nodes, or NVL72 racks): use one of "
                f"{', '.join(users) or 'the platforms'} with the number of nodes (or racks)")
    known = [i for kind in OWNABLE for i in catalog.by_id(kind)]
    close = difflib.get_close_matches(ident, known, n=1, cutoff=0.5)
    hint = f": did you mean '{close[0]}'?" if close else " (`fabricplan catalog` lists the ids)"
    return f"no platform, NIC, switch, link or rack with this id in the catalog{hint}"


def _check_nics(doc: Document, platforms: list[Platform], nics: list[Nic]) -> None:
    """An owned NIC must fit an owned platform that takes separate NICs (when platforms are owned)."""
    if not platforms or not nics:
        return
    takers = [p for p in platforms if not p.includes_scaleout_nics]
    for nic in nics:
        if not any(nic.id in p.compatible_nics for p in takers):
            why = ("every owned platform includes its own scale-out NICs" if not takers else
                   f"the owned platforms take {', '.join(sorted({n for p in takers for n in p.compatible_nics}))}")
            doc.problems.append(doc.problem(("inventory", nic.id), f"the owned NIC fits none of the owned platforms "
                                            f"({why}): remove it, or own a platform it fits", nic.id))


def _check_switches(doc: Document, platforms: list[Platform], nics: list[Nic], switches: list[Switch],
                    catalog: Catalog) -> None:
    """An owned switch must serve an owned NIC, or (no NICs owned) a NIC an owned platform carries."""
    if not switches:
        return
    catalog_nics = catalog.by_id("nics")
    if nics:
        candidates, what = nics, "owned NIC"
    elif platforms:
        candidates = [catalog_nics[n] for p in platforms for n in p.compatible_nics if n in catalog_nics]
        what = "NIC the owned platforms carry"
    else:
        return
    for sw in switches:
        if not any(sw.serves(nic) for nic in candidates):
            speeds = ", ".join(sorted({f"{n.fabric} {n.speed_gbps:g} Gb/s" for n in candidates}))
            doc.problems.append(doc.problem(("inventory", sw.id), f"the owned switch ({sw.fabric}, {sw.port_speed_gbps:g} "
                                            f"Gb/s ports) serves no {what} ({speeds}): remove it, or own NICs it serves",
                                            sw.id))
    for nic in nics:
        if not any(sw.serves(nic) for sw in switches):
            doc.problems.append(doc.problem(("inventory", nic.id), f"no owned switch serves the owned NIC ({nic.fabric}, "
                                            f"{nic.speed_gbps:g} Gb/s): remove it, or own a switch of its fabric and speed",
                                            nic.id))


def _check_links(doc: Document, switches: list[Switch], links: list[Any]) -> None:
    """Owned links must be of an owned switch's generation (when switches are owned)."""
    if not switches:
        return
    generations = sorted({sw.generation for sw in switches})
    for link in links:
        if link.generation not in generations:
            doc.problems.append(doc.problem(("inventory", link.id), f"the owned link is {link.generation} but the owned "
                                            f"switches are {', '.join(generations)}: remove it, or own a switch of its "
                                            "generation", link.id))
