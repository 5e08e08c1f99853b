"""Loading and validation: YAML files → typed `Catalog` and `Scenario`, with file:line:col errors.

Every problem in a file is collected and reported at once as
``FILE:LINE:COL: field.path: message (got VALUE)``. YAML is parsed once with a safe loader that
keeps the node tree, so each pydantic error location maps back to a line. The loader reads YAML 1.2
scalars (``NO`` stays a string, ``1e3`` is a number) and rejects YAML 1.1 octal/sexagesimal
integers, duplicate keys, alias bombs and oversized, empty, non-UTF-8 or non-mapping files.
"""
from __future__ import annotations

import difflib
import hashlib
import math
import re
import reprlib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Optional

import yaml
from pydantic import BaseModel, ValidationError

from .schema import Catalog, Scenario, as_list

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_ALIASES = 100
MAX_DEPTH = 50
MAX_EXPANDED_VALUES = 200_000  # values after expanding aliases (a shipped catalog has ~2,000)
CATALOG_KINDS = ("gpus", "platforms", "nics", "switches", "links", "racks")


# ------------------------------------------------------------------------------------ errors


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    column: int
    path: str
    message: str
    got: Any = None
    has_got: bool = False

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}: "
        field_path = f"{self.path}: " if self.path else ""
        got = f" (got {_show(self.got)})" if self.has_got else ""
        return f"{where}{field_path}{self.message}{got}"


class InputError(Exception):
    """Invalid input: one or more problems, each with file, line, field and a fix."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict, _REPR.maxlevel = 60, 60, 6, 6, 3


def _show(value: Any) -> str:
    # reprlib never walks a whole structure: an input value may be a huge aliased tree
    text = _REPR.repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------------------ YAML parsing

_INT_12 = re.compile(r"^[-+]?[0-9]+$")
_FLOAT_12 = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$")
_LEGACY_INT = re.compile(r"^[-+]?(0[0-7_]+|0o[0-7]+|0x[0-9a-fA-F_]+|0b[01_]+|[0-9][0-9_]*(:[0-5]?[0-9])+)$")


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars and an alias budget."""

    yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in v if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream):
        super().__init__(stream)
        self.aliases_seen = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases_seen += 1
            if self.aliases_seen > MAX_ALIASES:
                event = self.peek_event()
                raise yaml.YAMLError(
                    f"more than {MAX_ALIASES} YAML aliases (line {event.start_mark.line + 1}); "
                    "write the values out instead of referencing anchors"
                )
        return super().compose_node(parent, index)


for _first in "-+0123456789.":
    _Loader.add_implicit_resolver("tag:yaml.org,2002:int", _INT_12, list(_first))
    _Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list(_first))
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def _construct_int(loader, node):
    return int(loader.construct_scalar(node).replace("_", ""))


def _construct_float(loader, node):
    text = loader.construct_scalar(node).lower()
    if text.endswith("inf"):
        return -math.inf if text.startswith("-") else math.inf
    if text.endswith("nan"):
        return math.nan
    return float(text)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)


@dataclass
class Document:
    """A parsed YAML file: its data, its node tree (for line numbers) and its path."""

    path: str
    data: Any
    node: Optional[yaml.Node]
    sha256: str = ""
    problems: list[Problem] = field(default_factory=list)

    def mark(self, loc: Iterable) -> tuple[int, int]:
        """1-based (line, column) of the value at `loc`; the parent mapping when a key is missing."""
        node = self.node
        if node is None:
            return (1, 1)
        line, col = node.start_mark.line, node.start_mark.column
        for key in loc:
            if isinstance(node, yaml.MappingNode):
                hit = next(((k, v) for k, v in node.value if k.value == str(key)), None)
                if hit is None:
                    break
                line, col = hit[0].start_mark.line, hit[0].start_mark.column
                node = hit[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
                node = node.value[key]
                line, col = node.start_mark.line, node.start_mark.column
            else:
                break
        return (line + 1, col + 1)

    def problem(self, loc: Iterable, message: str, *args) -> Problem:
        loc = list(loc)
        line, col = self.mark(loc)
        got = {"got": args[0], "has_got": True} if args else {}
        return Problem(self.path, line, col, dotted(loc), message, **got)


def dotted(loc: Iterable) -> str:
    out = ""
    for key in loc:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def _node_checks(doc: Document, node: yaml.Node, depth: int = 0, seen: Optional[set] = None, loc: tuple = ()) -> None:
    """Duplicate keys, YAML 1.1 integers and nesting depth, checked on the node tree."""
    seen = set() if seen is None else seen
    if id(node) in seen:  # an alias: already checked
        return
    seen.add(id(node))
    if depth > MAX_DEPTH:
        m = node.start_mark
        doc.problems.append(Problem(doc.path, m.line + 1, m.column + 1, "", f"nesting deeper than {MAX_DEPTH} levels"))
        return
    if isinstance(node, yaml.MappingNode):
        first: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in first:
                m = key_node.start_mark
                doc.problems.append(Problem(
                    doc.path, m.line + 1, m.column + 1, dotted(loc + (key,)),
                    f"duplicate key '{key}' (first at line {first[key]}); YAML would silently keep the last one: remove one",
                ))
            else:
                first[key] = key_node.start_mark.line + 1
            _node_checks(doc, value_node, depth + 1, seen, loc + (key,))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _node_checks(doc, item, depth + 1, seen, loc + (index,))
    elif isinstance(node, yaml.ScalarNode) and node.style is None and _LEGACY_INT.match(node.value):
        m = node.start_mark
        doc.problems.append(Problem(
            doc.path, m.line + 1, m.column + 1, dotted(loc),
            "ambiguous number: YAML 1.1 reads a leading 0 as octal and a:b as base 60; "
            "write a plain decimal number, or quote it if it is text", node.value, True,
        ))


def _expanded_size(node: yaml.Node, memo: dict) -> int:
    """How many values the document has once every alias is expanded (memoised per node)."""
    key = id(node)
    if key not in memo:
        memo[key] = 1  # a recursive alias counts once instead of looping
        if isinstance(node, yaml.MappingNode):
            memo[key] = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            memo[key] = 1 + sum(_expanded_size(v, memo) for v in node.value)
    return memo[key]


def read_yaml(path: str | Path, display: Optional[str] = None) -> Document:
    """Parse one YAML file safely; raise InputError for anything that is not a usable mapping."""
    path = Path(path)
    name = display or str(path)

    def fail(message: str, line: int = 1, column: int = 1) -> InputError:
        return InputError([Problem(name, line, column, "", message)])

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise fail("file not found: check the path") from None
    except IsADirectoryError:
        raise fail("is a directory, not a YAML file") from None
    except OSError as exc:
        raise fail(f"cannot read the file: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise fail(f"file is {len(raw) / 1e6:.1f} MB; the limit is {MAX_FILE_BYTES / 1e6:.0f} MB")
    if b"\x00" in raw:
        raise fail("binary file (contains NUL bytes): expected a YAML text file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise fail(f"not UTF-8 text (byte 0x{raw[exc.start]:02x}): save the file as UTF-8", line, column) from None
    if not text.strip() or all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()):
        raise fail("empty file: expected a YAML mapping")
    loader = _Loader(text)
    loader.name = name
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise fail(f"YAML syntax error: {exc.problem or exc}", line, col) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise fail(f"YAML error: {exc}") from None
    finally:
        loader.dispose()
    if node is not None and _expanded_size(node, {}) > MAX_EXPANDED_VALUES:
        raise fail(f"the YAML expands to more than {MAX_EXPANDED_VALUES:,} values through anchors and aliases: "
                   "write the values out instead")
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        raise fail(f"expected a YAML mapping at the top level (got {kind})")
    doc = Document(name, data, node, hashlib.sha256(raw).hexdigest())
    _node_checks(doc, node)
    return doc


# ------------------------------------------------------------------------ pydantic → problems


def _nearest_key(model_cls: type[BaseModel], loc: tuple) -> Optional[type[BaseModel]]:
    """The pydantic model class that owns the last key of `loc` (to suggest a valid key)."""
    cls = model_cls
    for key in loc[:-1]:
        if isinstance(key, int) or cls is None:
            continue
        info = cls.model_fields.get(key)
        if info is None:
            return None
        cls = _model_in(info.annotation)
    return cls


def _model_in(annotation) -> Optional[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def validate(doc: Document, model_cls: type[BaseModel], data: Any = None):
    """Validate `doc.data` against `model_cls`; every error becomes a Problem on `doc`."""
    try:
        return model_cls.model_validate(doc.data if data is None else data)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            doc.problems.append(_problem_from(doc, model_cls, err))
        return None


def _problem_from(doc: Document, model_cls, err: dict) -> Problem:
    # drop pydantic's union-branch tags (e.g. 'list[...]', 'int') from the location
    loc = tuple(k for k in err["loc"] if isinstance(k, int) or not re.match(r"^(list|int|float|str|constrained|function|tagged)", str(k)) and "[" not in str(k))
    message = err["msg"]
    if err["type"] == "extra_forbidden":
        owner = _nearest_key(model_cls, loc)
        valid = list(owner.model_fields) if owner else []
        close = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.5)
        message = "unknown key" + (f": did you mean '{close[0]}'?" if close else "")
        if valid:
            message += f" (valid keys: {', '.join(valid)})"
        return doc.problem(loc, message)
    if err["type"] == "missing":
        return doc.problem(loc, "required field is missing: add it")
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    if err["type"] in ("finite_number",):
        message = "must be a finite number (NaN and infinity are not allowed)"
    return doc.problem(loc, message, err.get("input"))


def _raise_if(docs: Iterable[Document]) -> None:
    problems = [p for d in docs for p in d.problems]
    if problems:
        raise InputError(problems)


# --------------------------------------------------------------------------------- catalogs


def default_catalog_path() -> Path:
    """The shipped catalog: from the installed package, or from the source tree."""
    try:
        path = Path(str(resources.files("solver.catalogs") / "default.yaml"))
        if path.is_file():
            return path
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parent.parent / "catalogs" / "default.yaml"


@dataclass
class LoadedCatalog:
    """A merged catalog plus where each entry came from (for errors, reports and hashes)."""

    catalog: Catalog
    files: list[tuple[str, str]]  # (path, sha256)
    origin: dict[tuple[str, str], tuple[Document, tuple]]  # (kind, id) -> (document, loc)
    overridden: list[str]

    def __getattr__(self, name):  # read access to the Catalog fields
        return getattr(self.catalog, name)


def load_catalog(paths: Optional[Iterable[str | Path]] = None) -> LoadedCatalog:
    """Load and merge catalog files; later files override entries with the same id."""
    paths = [default_catalog_path()] if not paths else list(paths)
    docs = [read_yaml(p) for p in paths]
    merged: dict[str, dict[str, Any]] = {kind: {} for kind in CATALOG_KINDS}
    origin: dict[tuple[str, str], tuple[Document, tuple]] = {}
    overridden: list[str] = []
    facility: dict[str, Any] = {}
    names = []
    for doc in docs:
        part = validate(doc, Catalog)
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
                    overridden.append(f"{kind}.{item.id}: {doc.path} overrides {previous}")
                merged[kind][item.id] = item
                origin[(kind, item.id)] = (doc, (kind, index))
        if part.facility is not None:
            facility.update(part.facility.model_dump(exclude_unset=True))
            origin[("facility", "facility")] = (doc, ("facility",))
    _raise_if(docs)
    catalog = Catalog.model_construct(
        name=" + ".join(names),
        description="",
        facility=_facility(facility),
        **{kind: list(merged[kind].values()) for kind in CATALOG_KINDS},
    )
    loaded = LoadedCatalog(catalog, [(d.path, d.sha256) for d in docs], origin, overridden)
    _check_catalog_references(loaded)
    return loaded


def _facility(values: dict):
    from .schema import Facility

    return Facility.model_validate({"source": "defaults (no facility block in the catalog)", **values})


def _check_catalog_references(loaded: LoadedCatalog) -> None:
    cat = loaded.catalog
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


# --------------------------------------------------------------------------------- scenarios


@dataclass
class LoadedScenario:
    """A validated scenario plus its document (for line numbers) and its catalog files."""

    scenario: Scenario
    doc: Document
    catalog_paths: list[Path]

    def __getattr__(self, name):
        return getattr(self.scenario, name)


def load_scenario(source: str | Path | dict, display: Optional[str] = None) -> LoadedScenario:
    """Load a scenario from a YAML file or a dict (the API and sweeps pass dicts)."""
    if isinstance(source, dict):
        doc = Document(display or "<scenario>", source, None)
        base = Path.cwd()
    else:
        doc = read_yaml(source, display)
        base = Path(source).resolve().parent
    scenario = validate(doc, Scenario)
    _raise_if([doc])
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
    _raise_if([doc])
    return ls


def check_against_catalog(ls: LoadedScenario, cat: LoadedCatalog) -> None:
    """Cross-references between a scenario and the catalog it runs on (allow-lists, pins)."""
    sc, doc = ls.scenario, ls.doc
    c = cat.catalog
    known = {"platforms": c.by_id("platforms"), "gpus": c.by_id("gpus"), "nics": c.by_id("nics"), "switches": c.by_id("switches")}
    for kind, items in known.items():
        for i, ident in enumerate(as_list(getattr(sc.constraints, kind)) or []):
            if ident not in items:
                loc = ("constraints", kind) + ((i,) if isinstance(getattr(sc.constraints, kind), list) else ())
                doc.problems.append(doc.problem(loc, _unknown(kind, ident, items), ident))
    pin = sc.pin
    for key, kind in (("platform", "platforms"), ("nic", "nics"), ("switch", "switches")):
        ident = getattr(pin, key)
        if ident is not None and ident not in known[kind]:
            doc.problems.append(doc.problem(("pin", key), _unknown(kind, ident, known[kind]), ident))
    plat = known["platforms"].get(pin.platform) if pin.platform else None
    if plat is not None:
        from .design_space import domain_sizes

        sizes = domain_sizes(plat.gpus_per_domain, pin.gpus_per_domain_used)
        if pin.tp is not None and all(size % pin.tp for size in sizes):
            doc.problems.append(doc.problem(("pin", "tp"), f"tensor parallelism must sit inside one NVLink domain: tp must divide "
                                            f"{' or '.join(map(str, sizes))} GPUs per domain on {plat.id}", pin.tp))
        if pin.nic is not None and pin.nic not in plat.compatible_nics:
            doc.problems.append(doc.problem(("pin", "nic"), f"not compatible with platform {plat.id} (compatible: {', '.join(plat.compatible_nics)})", pin.nic))
        if pin.rails_per_node is not None and pin.rails_per_node not in plat.scaleout_nics_per_node:
            doc.problems.append(doc.problem(("pin", "rails_per_node"), f"platform {plat.id} allows {plat.scaleout_nics_per_node} scale-out NICs per node", pin.rails_per_node))
        if pin.gpus_per_domain_used is not None and pin.gpus_per_domain_used > plat.gpus_per_domain:
            doc.problems.append(doc.problem(("pin", "gpus_per_domain_used"), f"more than the platform's {plat.gpus_per_domain} GPUs per domain", pin.gpus_per_domain_used))
    if pin.nic and pin.switch and pin.nic in known["nics"] and pin.switch in known["switches"]:
        nic, sw = known["nics"][pin.nic], known["switches"][pin.switch]
        if nic.fabric != sw.fabric:
            doc.problems.append(doc.problem(("pin", "switch"), f"the {sw.fabric} switch {sw.id} cannot serve the {nic.fabric} NIC {nic.id}", pin.switch))
    _raise_if([doc])


def _unknown(kind: str, ident: str, items: dict) -> str:
    close = difflib.get_close_matches(ident, list(items), n=1, cutoff=0.5)
    hint = f": did you mean '{close[0]}'?" if close else f" (known: {', '.join(sorted(items))})"
    return f"no {kind[:-1] if kind != 'switches' else 'switch'} with this id in the catalog{hint}"


_PIN_ALLOW = {
    "platform": ("constraints", "platforms"), "nic": ("constraints", "nics"), "switch": ("constraints", "switches"),
    "rails_per_node": ("constraints", "rails_per_node"), "oversubscription": ("constraints", "oversubscription"),
    "tp": ("parallelism", "tp"), "cp": ("parallelism", "cp"), "pp": ("parallelism", "pp"), "vp": ("parallelism", "vp"),
    "microbatch_size": ("parallelism", "microbatch_size"),
}


def _check_pins_allowed(ls: LoadedScenario) -> None:
    sc, doc = ls.scenario, ls.doc
    for key, (block, field_name) in _PIN_ALLOW.items():
        pinned = getattr(sc.pin, key)
        allowed = as_list(getattr(getattr(sc, block), field_name))
        if pinned is not None and allowed is not None and pinned not in allowed:
            doc.problems.append(doc.problem(("pin", key), f"pinned value is outside the allow-list {block}.{field_name} = {allowed}", pinned))
