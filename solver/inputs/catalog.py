"""The catalog: YAML files merged by id into one typed `Catalog`, with its provenance.

Several files may be given; later files override entries with the same id (a vendor quote file
overriding list prices is the common case). Where each entry came from (file, YAML location) is
kept in a `CatalogProvenance` attached to the catalog, for located errors, reports and hashes.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, Problem
from .catalog_compat import upgrade
from .reliability import CatalogReliability
from .schema import Catalog, Facility
from .stacks import ANY_GPU
from .yaml_safe import Document, raise_if, read_yaml, validate

CATALOG_KINDS = ("gpus", "platforms", "nics", "switches", "links", "racks", "stacks", "nic_configurations", "site_lines",
                 "rentals", "lifecycle", "power_profiles")


def default_catalog_path() -> Path:
    """The shipped catalog: inside an installed wheel (solver/catalogs/default.yaml), else in the
    source tree beside the package (catalogs/default.yaml). Both are found from this file's own
    location, so a second checkout never reads another checkout's catalog."""
    package = Path(__file__).resolve().parent.parent
    for path in (package / "catalogs" / "default.yaml", package.parent / "catalogs" / "default.yaml"):
        if path.is_file():
            return path
    return package.parent / "catalogs" / "default.yaml"


@dataclass
class CatalogProvenance:
    """Where a merged catalog came from: its files with their hashes, the YAML location of every
    entry (for located errors), and which entries a later file overrode."""

    files: list[tuple[str, str]] = field(default_factory=list)  # (path, sha256)
    origin: dict[tuple[str, str], tuple[Document, tuple]] = field(default_factory=dict)  # (kind, id) -> (doc, loc)
    overridden: list[str] = field(default_factory=list)
    deprecations: list[str] = field(default_factory=list)  # located warnings for renamed keys (catalog_compat.py)


def provenance(catalog: Catalog) -> CatalogProvenance:
    """The provenance of a loaded catalog (an empty one for a catalog built in code)."""
    found = catalog.provenance
    return found if found is not None else CatalogProvenance()


def layered_paths(paths: list | None = None, default: bool = True) -> list:
    """The catalog files to merge, in order: the shipped default first unless `default` is false."""
    first = [default_catalog_path()] if default else []
    return first + [p for p in (paths or []) if not (default and _same_file(p, first[0]))]


def _same_file(a, b) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def load_catalog(paths: Iterable[str | Path] | None = None) -> Catalog:
    """Load and merge catalog files in order (None = the shipped default catalog alone).

    A later file's entry with an id an earlier file has overrides it field by field: it may give
    only some fields (a price-only quote: `id`, `unit_price_usd`, `price_source`, `price_date`), the
    rest are kept. A quote that sets a price without `price_is_estimate` is a firm price (false).
    An entry with an id no earlier file has must give every field.
    """
    paths = [default_catalog_path()] if not paths else list(paths)
    docs = [read_yaml(p) for p in paths]
    raw: dict[str, dict[str, dict]] = {kind: {} for kind in CATALOG_KINDS}  # merged YAML mappings by id
    merged: dict[str, dict[str, Any]] = {kind: {} for kind in CATALOG_KINDS}
    origin: dict[tuple[str, str], tuple[Document, tuple]] = {}
    overridden: list[str] = []
    facility: dict[str, Any] = {}
    reliability: dict[str, Any] = {}  # later files override the failure data field by field
    names = []
    deprecations: list[str] = []
    for doc in docs:
        doc.data, warned = upgrade(doc)
        deprecations += warned
        before = len(doc.problems)
        data, partial = _layered(doc, raw)
        flagged = len(doc.problems)
        part = validate(doc, Catalog, data)
        if flagged > before:  # an entry already reported as "nothing to override" needs no list of missing fields
            orphans = {p.path.rsplit(".", 1)[0] for p in doc.problems[before:flagged]}
            doc.problems[flagged:] = [p for p in doc.problems[flagged:]
                                      if not (p.message.startswith("required field is missing")
                                              and p.path.rsplit(".", 1)[0] in orphans)]
        if part is None:
            continue
        names.append(part.name)
        for kind in CATALOG_KINDS:
            ids_here: set[str] = set()
            for index, item in enumerate(getattr(part, kind)):
                if item.id in ids_here:
                    doc.problems.append(doc.problem((kind, index, "id"), f"duplicate {kind} id in this file", item.id))
                ids_here.add(item.id)
                if item.id in merged[kind]:
                    previous = origin[(kind, item.id)][0].path
                    fields = partial.get((kind, index))
                    what = f" ({', '.join(fields)})" if fields else ""
                    overridden.append(f"{kind}.{item.id}: {doc.path} overrides {previous}{what}")
                merged[kind][item.id] = item
                raw[kind][item.id] = data[kind][index]
                origin[(kind, item.id)] = (doc, (kind, index))
        if part.facility is not None:
            facility.update(part.facility.model_dump(exclude_unset=True))
            origin[("facility", "facility")] = (doc, ("facility",))
        if part.reliability is not None:
            reliability.update(dict(part.reliability))
    raise_if(docs)
    catalog = Catalog.model_construct(
        name=" + ".join(names),
        description="",
        facility=_facility(facility),
        reliability=CatalogReliability.model_validate(reliability) if reliability else None,
        **{kind: list(merged[kind].values()) for kind in CATALOG_KINDS},  # type: ignore[arg-type]
    )
    catalog._provenance = CatalogProvenance([(d.path, d.sha256) for d in docs], origin, overridden, deprecations)
    _check_catalog_references(catalog)
    return catalog


def _layered(doc: Document, raw: dict[str, dict[str, dict]]) -> tuple[dict, dict]:
    """The file's data with each entry whose id an earlier file has laid over that entry's fields,
    and {(kind, index): the fields it gives}. An incomplete entry with a new id is reported here
    (an override needs an entry to override), not as a list of missing fields."""
    data = dict(doc.data)
    partial: dict[tuple[str, int], list[str]] = {}
    earlier = any(raw[kind] for kind in CATALOG_KINDS)
    for kind in CATALOG_KINDS:
        items = data.get(kind)
        if not isinstance(items, list):
            continue
        layered = []
        for index, item in enumerate(items):
            ident = item.get("id") if isinstance(item, dict) else None
            if isinstance(ident, str) and ident in raw[kind]:
                given = dict(item)
                _check_quote_provenance(doc, kind, index, given, raw[kind][ident])
                if ({"unit_price_usd", "usd_per_gpu_hour"} & set(given)) and "price_is_estimate" not in given:
                    given["price_is_estimate"] = False  # a quoted price is a firm price
                if _missing(kind, item):
                    partial[(kind, index)] = [k for k in item if k != "id"]
                item = {**raw[kind][ident], **_merged_precision_maps(given, raw[kind][ident])}
            elif isinstance(ident, str) and earlier and _looks_partial(kind, item):
                doc.problems.append(doc.problem((kind, index, "id"), _no_entry_to_override(kind, ident, raw), ident))
            layered.append(item)
        data[kind] = layered
    return data, partial


PRECISION_MAPS = ("dense_tflops", "expert_efficiency")
"""An entry's top-level maps keyed by precision name (solver/inputs/precisions.py): an override lays its keys over
the earlier entry's map, so `dense_tflops: {bf16: 900}` changes the BF16 peak and keeps the others, as the old
`bf16_dense_tflops: 900` did."""


def _merged_precision_maps(given: dict, earlier: dict) -> dict:
    """`given` with each precision map (`PRECISION_MAPS`) laid over the earlier entry's map of the same name."""
    out = dict(given)
    for key in PRECISION_MAPS:
        if isinstance(given.get(key), dict) and isinstance(earlier.get(key), dict):
            out[key] = {**earlier[key], **given[key]}
    return out


def _check_quote_provenance(doc: Document, kind: str, index: int, given: dict, earlier: dict) -> None:
    """An override that sets a price must say where and when it was quoted: without them the
    earlier entry's `price_source` and `price_date` would be kept beside the new price, and it
    would be labelled a firm quote (issue 27)."""
    prices = [k for k in given if k.endswith("_usd") and k in earlier and "price_source" in earlier]
    missing = [k for k in ("price_source", "price_date") if k not in given]
    if prices and missing:
        doc.problems.append(doc.problem((kind, index, prices[0]), (
            f"a quoted price needs where and when it was quoted; missing: {', '.join(missing)} "
            f"(add e.g. price_source: \"ACME quote 42\" and price_date: \"2026-11\"; "
            "price_is_estimate: true if it is not a firm quote)"), given[prices[0]]))


def _missing(kind: str, item: dict) -> list[str]:
    """The required fields of its kind a catalog entry does not give."""
    model = Catalog.model_fields[kind].annotation.__args__[0]  # type: ignore[union-attr]
    return [name for name, info in model.model_fields.items() if info.is_required() and name not in item]


def _looks_partial(kind: str, item: dict) -> bool:
    """An entry that gives fewer than half of its kind's required fields is meant as an override
    (a price-only quote), not as a new entry with a few fields forgotten."""
    model = Catalog.model_fields[kind].annotation.__args__[0]  # type: ignore[union-attr]
    required = sum(1 for info in model.model_fields.values() if info.is_required())
    return len(_missing(kind, item)) > required / 2


def _no_entry_to_override(kind: str, ident: str, raw: dict[str, dict[str, dict]]) -> str:
    import difflib

    known = sorted(raw[kind])
    close = difflib.get_close_matches(ident, known, n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(known) or 'none'}"
    return (f"no {kind} entry with this id in the catalogs before this file ({hint}); an entry that gives only "
            "some fields (e.g. a price-only quote) overrides an existing id; a new entry must give every field")


def _facility(values: dict) -> Facility:
    return Facility.model_validate({"source": "defaults (no facility block in the catalog)", **values})


def _stack_gpus(cat: Catalog) -> list[tuple[str, tuple, str]]:
    """(stack id, location under the stack, GPU id) of every GPU a stack profile names (`any` left out)."""
    return [(stack.id, ("gpus", i, "gpus", j), gpu) for stack in cat.stacks for i, entry in enumerate(stack.gpus)
            for j, gpu in enumerate(entry.gpus) if gpu != ANY_GPU]
def _check_orderable(cat: Catalog, report) -> None:
    """NIC configurations name a platform and one of its rail counts, once each; site lines name platforms."""
    platforms, seen = cat.by_id("platforms"), set()
    for c in cat.nic_configurations:
        plat = platforms.get(c.platform)
        if plat is None:
            report("nic_configurations", c.id, ("platform",), f"no platform with this id in the catalog (known: {', '.join(sorted(platforms))})", c.platform)
        elif c.rails_per_node not in plat.rails_per_node_options:
            report("nic_configurations", c.id, ("rails_per_node",), f"{plat.id} takes {plat.rails_per_node_options} scale-out NICs per node", c.rails_per_node)
        elif (c.platform, c.rails_per_node) in seen:
            report("nic_configurations", c.id, ("rails_per_node",), f"a second configuration of {plat.id} with this NIC count", c.rails_per_node)
        seen.add((c.platform, c.rails_per_node))
    for s in cat.site_lines:
        for i, ident in enumerate(s.platforms):
            if ident not in platforms:
                report("site_lines", s.id, ("platforms", i), f"no platform with this id in the catalog (known: {', '.join(sorted(platforms))})", ident)


def _check_stacks_and_rentals(cat: Catalog, report) -> None:
    """Stack profiles name GPUs of the catalog (or `any`); rental offers name its platforms."""
    gpus, platforms = cat.by_id("gpus"), cat.by_id("platforms")
    for stack_id, subloc, gpu in _stack_gpus(cat):
        if gpu not in gpus:
            report("stacks", stack_id, subloc,
                   f"no GPU with this id in the catalog (known: {', '.join(sorted(gpus)) or 'none'}; or '{ANY_GPU}')", gpu)
    for rental in cat.rentals:
        if rental.platform not in platforms:
            report("rentals", rental.id, ("platform",),
                   f"no platform with this id in the catalog (known: {', '.join(sorted(platforms)) or 'none'})", rental.platform)
    parts = {i for kind in ("gpus", "platforms", "nics", "switches", "links", "racks") for i in cat.by_id(kind)}
    for profile in cat.power_profiles:
        if profile.gpu not in gpus:
            report("power_profiles", profile.id, ("gpu",), f"no GPU with this id in the catalog (known: "
                   f"{', '.join(sorted(gpus)) or 'none'})", profile.gpu)
        elif profile.gpu_w >= gpus[profile.gpu].tdp_w:
            report("power_profiles", profile.id, ("gpu_w",), f"a profile lowers the power limit: give less than "
                   f"the GPU's tdp_w ({gpus[profile.gpu].tdp_w:g} W)", profile.gpu_w)
    for entry in cat.lifecycle:
        if entry.id not in parts:
            report("lifecycle", entry.id, ("id",), "no part or GPU with this id in the catalog: name a platform, NIC, "
                   "switch, link, rack or GPU", entry.id)


def _check_catalog_references(cat: Catalog) -> None:
    loaded = provenance(cat)
    problems: list[Problem] = []

    def report(kind: str, ident: str, subloc: tuple, message: str, got=None, has_got=True):
        doc, loc = loaded.origin[(kind, ident)]
        problems.append(doc.problem(loc + subloc, message, got) if has_got else doc.problem(loc + subloc, message))

    gpus, nics = cat.by_id("gpus"), cat.by_id("nics")
    racks = cat.by_id("racks")
    for plat in cat.platforms:
        if plat.gpu not in gpus:
            report("platforms", plat.id, ("gpu",), f"no GPU with this id in the catalog (known: {', '.join(sorted(gpus)) or 'none'})", plat.gpu)
        for i, nic in enumerate(plat.compatible_nics):
            if nic not in nics:
                report("platforms", plat.id, ("compatible_nics", i), f"no NIC with this id in the catalog (known: {', '.join(sorted(nics)) or 'none'})", nic)
    _check_stacks_and_rentals(cat, report)
    _check_orderable(cat, report)
    for role in ("compute_rack", "network_rack"):
        rack = getattr(cat.facility, role)
        if cat.platforms and rack not in racks:
            key = ("facility", "facility")
            if key in loaded.origin:
                doc, loc = loaded.origin[key]
                problems.append(doc.problem(loc + (role,), f"no rack with this id in the catalog (known: {', '.join(sorted(racks)) or 'none'})", rack))
            else:
                problems.append(Problem(loaded.files[-1][0], 1, 1, f"facility.{role}", f"the default rack '{rack}' is not in the catalog: add a facility block naming one of: {', '.join(sorted(racks)) or 'none'}"))
    if problems:
        raise InputError(problems)

