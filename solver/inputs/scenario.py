"""Scenarios: one YAML file (or an API dict) → a validated `Scenario`, checked against a catalog."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from .inventory import check_inventory, check_scenario_extras
from .schema import Catalog, Pin, Platform, Scenario, as_list
from .stacks import resolve_stack, stack_of
from .yaml_safe import Document, raise_if, read_yaml, validate


@dataclass
class LoadedScenario:
    """A validated scenario plus its document (for line numbers) and its catalog files."""

    scenario: Scenario
    doc: Document
    catalog_paths: list[Path]


def load_scenario(source: str | Path | dict, display: str | None = None) -> LoadedScenario:
    """Load a scenario from a YAML file or a dict (the API and sweeps pass dicts)."""
    if isinstance(source, dict):
        doc = Document(display or "<scenario>", source, None)
        base = Path.cwd()
    else:
        doc = read_yaml(source, display)
        base = Path(source).resolve().parent
    scenario = validate(doc, Scenario)
    raise_if([doc])
    paths = []
    for i, rel in enumerate(scenario.catalog):
        path = (base / rel) if not Path(rel).is_absolute() else Path(rel)
        if path.suffix.lower() not in (".yaml", ".yml"):
            doc.problems.append(doc.problem(("catalog", i), "catalog files must be .yaml or .yml", rel))
        elif not path.is_file():
            doc.problems.append(doc.problem(("catalog", i), f"catalog file not found (resolved relative to the scenario: {path.name})", rel))
        paths.append(path)
    ls = LoadedScenario(scenario, doc, paths)
    _check_pins_allowed(ls)
    check_scenario_extras(doc, scenario)
    _check_expert_degrees(ls)
    raise_if([doc])
    return ls


def check_against_catalog(ls: LoadedScenario, c: Catalog) -> None:
    """Cross-references between a scenario and the catalog it runs on (allow-lists, pins)."""
    sc, doc = ls.scenario, ls.doc
    known = {kind: c.by_id(kind) for kind in ("platforms", "gpus", "nics", "switches")}
    for kind, items in known.items():
        for i, ident in enumerate(as_list(getattr(sc.constraints, kind)) or []):
            if ident not in items:
                loc = ("constraints", kind) + ((i,) if isinstance(getattr(sc.constraints, kind), list) else ())
                doc.problems.append(doc.problem(loc, _unknown(kind, ident, items), ident))
    configs = c.by_id("nic_configurations")
    opened = sc.constraints.nic_configurations
    for i, ident in enumerate(opened if isinstance(opened, list) else []):
        if ident not in configs:
            doc.problems.append(doc.problem(("constraints", "nic_configurations", i), _unknown("nic_configurations", ident, configs), ident))
    pin = sc.pin
    for key, kind in (("platform", "platforms"), ("nic", "nics"), ("switch", "switches")):
        ident = getattr(pin, key)
        if ident is not None and ident not in known[kind]:
            doc.problems.append(doc.problem(("pin", key), _unknown(kind, ident, known[kind]), ident))
    plat = known["platforms"].get(pin.platform) if pin.platform else None
    if plat is not None:
        _check_pins_on_platform(doc, pin, plat)
    if pin.nic and pin.switch and pin.nic in known["nics"] and pin.switch in known["switches"]:
        nic, sw = known["nics"][pin.nic], known["switches"][pin.switch]
        if nic.fabric != sw.fabric:
            doc.problems.append(doc.problem(("pin", "switch"), f"the {sw.fabric} switch {sw.id} cannot serve the {nic.fabric} NIC {nic.id}", pin.switch))
    check_inventory(doc, sc, c)
    _check_stack(doc, sc, c)
    raise_if([doc])
    ls.scenario = resolve_stack(sc, c)


def _check_stack(doc: Document, sc: Scenario, c: Catalog) -> None:
    """workload.stack names a profile of the catalog's `stacks:` list (SPEC §4.8)."""
    if stack_of(c, sc.workload.stack) is None:
        known = c.by_id("stacks")
        doc.problems.append(doc.problem(("workload", "stack"), _unknown("stacks", sc.workload.stack, known)
                                        + "; a catalog's `stacks:` list defines them (docs/model.md \"Stacks\")",
                                        sc.workload.stack))
    elif getattr(stack_of(c, sc.workload.stack), "kind", "training") != sc.workload.kind:
        have = [k for k, v in c.by_id("stacks").items() if getattr(v, "kind", "training") == sc.workload.kind]
        doc.problems.append(doc.problem(("workload", "stack"), f"stack {sc.workload.stack!r} is a "
                                        f"{stack_of(c, sc.workload.stack).kind} stack but workload.kind is "  # type: ignore[union-attr]
                                        f"{sc.workload.kind}: name one of {sorted(have)}", sc.workload.stack))


def _check_pins_on_platform(doc: Document, pin: Pin, plat: Platform) -> None:
    """Pins that must agree with the pinned platform: tp inside a domain, its NICs and rail counts."""
    sizes = plat.domain_sizes(pin.gpus_per_domain_used)
    if pin.tp is not None and all(size % pin.tp for size in sizes):
        doc.problems.append(doc.problem(("pin", "tp"), f"tensor parallelism must sit inside one NVLink domain: tp must divide "
                                        f"{' or '.join(map(str, sizes))} GPUs per domain on {plat.id}", pin.tp))
    if pin.nic is not None and pin.nic not in plat.compatible_nics:
        doc.problems.append(doc.problem(("pin", "nic"), f"not compatible with platform {plat.id} (compatible: {', '.join(plat.compatible_nics)})", pin.nic))
    if pin.rails_per_node is not None and pin.rails_per_node not in plat.rails_per_node_options:
        doc.problems.append(doc.problem(("pin", "rails_per_node"), f"platform {plat.id} allows {plat.rails_per_node_options} scale-out NICs per node", pin.rails_per_node))
    if pin.gpus_per_domain_used is not None and pin.gpus_per_domain_used > plat.gpus_per_domain:
        doc.problems.append(doc.problem(("pin", "gpus_per_domain_used"), f"more than the platform's {plat.gpus_per_domain} GPUs per domain", pin.gpus_per_domain_used))


def raw_catalog_problems(doc: Document, c: Catalog) -> list:
    """The catalog names of a scenario whose schema failed (`validate` reports them in the same pass): every
    allow-list and pin id in the raw document that the catalog lacks, located at its line."""
    data = doc.data if isinstance(doc.data, dict) else {}
    found = []
    cons, pin = data.get("constraints"), data.get("pin")
    for kind in ("platforms", "gpus", "nics", "switches"):
        items = c.by_id(kind)
        value = cons.get(kind) if isinstance(cons, dict) else None
        listed = value if isinstance(value, list) else [value]
        for i, ident in enumerate(listed):
            if isinstance(ident, str) and ident not in items:
                loc = ("constraints", kind) + ((i,) if isinstance(value, list) else ())
                found.append(doc.problem(loc, _unknown(kind, ident, items), ident))
    for key, kind in (("platform", "platforms"), ("nic", "nics"), ("switch", "switches")):
        ident = pin.get(key) if isinstance(pin, dict) else None
        if isinstance(ident, str) and ident not in c.by_id(kind):
            found.append(doc.problem(("pin", key), _unknown(kind, ident, c.by_id(kind)), ident))
    return found


def _unknown(kind: str, ident: str, items: dict) -> str:
    close = difflib.get_close_matches(ident, list(items), n=1, cutoff=0.5)
    hint = f": did you mean '{close[0]}'?" if close else f" (known: {', '.join(sorted(items))})"
    return f"no {kind[:-1] if kind != 'switches' else 'switch'} with this id in the catalog{hint}"


_PIN_ALLOW = {
    "platform": ("constraints", "platforms"), "nic": ("constraints", "nics"), "switch": ("constraints", "switches"),
    "rails_per_node": ("constraints", "rails_per_node"), "oversubscription": ("constraints", "oversubscription"),
    "above_pod_oversubscription": ("constraints", "above_pod_oversubscription"), "fabric": ("constraints", "fabrics"),
    "tp": ("parallelism", "tp"), "cp": ("parallelism", "cp"), "pp": ("parallelism", "pp"), "vp": ("parallelism", "vp"),
    "microbatch_size": ("parallelism", "microbatch_size"), "ep": ("parallelism", "ep"), "etp": ("parallelism", "etp"),
}


def _check_pins_allowed(ls: LoadedScenario) -> None:
    sc, doc = ls.scenario, ls.doc
    for key, (block, field_name) in _PIN_ALLOW.items():
        pinned = getattr(sc.pin, key)
        allowed = as_list(getattr(getattr(sc, block), field_name))
        if pinned is not None and allowed is not None and pinned not in allowed:
            doc.problems.append(doc.problem(("pin", key), f"pinned value is outside the allow-list {block}.{field_name} = {allowed}", pinned))



def _check_expert_degrees(ls: LoadedScenario) -> None:
    """ep and etp (allow-lists and pins) need a Mixture-of-Experts model; ep divides its experts and
    etp its expert width (SPEC 4.7)."""
    sc, doc = ls.scenario, ls.doc
    moe = sc.workload.model.moe
    for block in ("parallelism", "pin"):
        for name in ("ep", "etp"):
            choice = getattr(getattr(sc, block), name)
            for i, value in enumerate(as_list(choice) or []):
                loc = (block, name) + ((i,) if isinstance(choice, list) else ())
                if moe is None:
                    if value != 1:
                        doc.problems.append(doc.problem(loc, f"{name} > 1 needs a Mixture-of-Experts model "
                                                        "(workload.model.moe)", value))
                elif name == "ep" and moe.experts % value:
                    doc.problems.append(doc.problem(loc, f"ep must divide the {moe.experts} experts "
                                                    f"(each rank holds experts / ep of them)", value))
                elif name == "etp" and moe.expert_ffn_hidden_size % value:
                    doc.problems.append(doc.problem(loc, f"etp must divide the expert width expert_ffn_hidden_size = "
                                                    f"{moe.expert_ffn_hidden_size}", value))
