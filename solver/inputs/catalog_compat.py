"""Catalog keys renamed by issue 39, read with a located deprecation warning (a buyer's own catalogs and the overlays
`fabricplan calibrate` wrote before it keep loading).

- precision as a field suffix → a map keyed by precision name (solver/inputs/precisions.py): GPU
  `bf16_dense_tflops`, `fp8_dense_tflops`, `fp4_dense_tflops` → `dense_tflops: {bf16: …, fp8: …, fp4: …}`;
  `compute_model.gemm_efficiency_bf16/_fp8` → `compute_model.gemm_efficiency: {bf16: …, fp8: …}`; a stack GPU entry's
  `gemm_factor_bf16/_fp8` → `gemm_factor: {bf16: …, fp8: …}`;
- one name for rails: platform `scaleout_nics_per_node` → `rails_per_node_options`; NIC configuration and rental
  `nics_per_node` → `rails_per_node`.

`upgrade` rewrites one file's raw mapping before validation and returns a warning per old key (file:line: path: what
to write). A file that gives an old key beside its new one is a located input error. An override entry's old peak keys
become a partial map, which the loader lays over the earlier entry's `dense_tflops` like any override (one
precision overrides one peak, as the old field did; `catalog.PRECISION_MAPS`).
"""
from __future__ import annotations

import re
from typing import Any

from .yaml_safe import Document, dotted

_SUFFIX = re.compile(r"^(?P<base>[a-z_]+?)_(?P<precision>bf16|fp8|fp4|mxfp8)$")
_PREFIX = re.compile(r"^(?P<precision>bf16|fp8|fp4|mxfp8)_dense_tflops$")
RENAMED = {"platforms": {"scaleout_nics_per_node": "rails_per_node_options"},
           "nic_configurations": {"nics_per_node": "rails_per_node"},
           "rentals": {"nics_per_node": "rails_per_node"}}
"""Old key → new key, per catalog list."""


def _precision_keys(item: dict, base: str) -> dict[str, str]:
    """{old key: precision} of `item`'s keys that spell `base` with a precision suffix (or prefix for peaks)."""
    out = {}
    for key in item:
        if not isinstance(key, str):
            continue
        m = _PREFIX.match(key) if base == "dense_tflops" else _SUFFIX.match(key)
        if m and (base == "dense_tflops" or m.group("base") == base):
            out[key] = m.group("precision")
    return out


class _Upgrader:
    def __init__(self, doc: Document):
        self.doc, self.warnings = doc, []  # type: ignore[var-annotated]

    def _warn(self, loc: tuple, text: str) -> None:
        line, col = self.doc.mark(loc)
        self.warnings.append(f"{self.doc.path}:{line}:{col}: {dotted(loc)}: deprecated key: {text}")

    def to_map(self, item: dict, loc: tuple, base: str) -> dict:
        """`item` with its precision-suffixed `base` keys folded into the map `base` (a new dict; an override's map is
        laid over the earlier entry's by the loader, `catalog.PRECISION_MAPS`)."""
        old = _precision_keys(item, base)
        if not old:
            return item
        if base in item:
            first = next(iter(old))
            self.doc.problems.append(self.doc.problem(loc + (first,), f"give `{base}` once: this file also writes "
                                                      f"`{base}:` (remove {', '.join(old)})"))
            return {k: v for k, v in item.items() if k not in old}  # said once: not again as an unknown key
        values = {}
        for key, precision in old.items():
            if item[key] is not None:
                values[precision] = item[key]
        example = ", ".join(f"{p}: {item[k]}" for k, p in old.items() if item[k] is not None)
        self._warn(loc + (next(iter(old)),), f"write `{base}: {{{example}}}` (precision is a map keyed by name; "
                   f"{', '.join(old)} will be removed)")
        out = {k: v for k, v in item.items() if k not in old}
        out[base] = values
        return out

    def rename(self, item: dict, loc: tuple, kind: str) -> dict:
        out = item
        for old, new in RENAMED.get(kind, {}).items():
            if old not in out:
                continue
            if new in out:
                self.doc.problems.append(self.doc.problem(loc + (old,), f"give `{new}` once: this file also writes it "
                                                          f"(remove `{old}`)"))
                out = {k: v for k, v in out.items() if k != old}  # said once: not again as an unknown key
                continue
            self._warn(loc + (old,), f"write `{new}: {out[old]}` (one name for the scale-out NICs per node; `{old}` "
                       "will be removed)")
            out = {(new if k == old else k): v for k, v in out.items()}
        return out

    def gpu(self, item: dict, loc: tuple) -> dict:
        item = self.to_map(item, loc, "dense_tflops")
        cm = item.get("compute_model")
        if isinstance(cm, dict):
            new = self.to_map(cm, loc + ("compute_model",), "gemm_efficiency")
            if new is not cm:
                item = {**item, "compute_model": new}
        return item

    def stack(self, item: dict, loc: tuple) -> dict:
        entries = item.get("gpus")
        if not isinstance(entries, list):
            return item
        new = [self.to_map(e, loc + ("gpus", j), "gemm_factor") if isinstance(e, dict) else e
               for j, e in enumerate(entries)]
        return {**item, "gpus": new} if any(a is not b for a, b in zip(new, entries, strict=True)) else item


def upgrade(doc: Document) -> tuple[Any, list[str]]:
    """(the file's data with the renamed keys written the new way, a located warning per old key)."""
    data = doc.data
    if not isinstance(data, dict):
        return data, []
    up = _Upgrader(doc)
    out = dict(data)
    for kind, items in data.items():
        if not isinstance(items, list):
            continue
        new = []
        for index, item in enumerate(items):
            if isinstance(item, dict):
                loc = (kind, index)
                item = up.rename(item, loc, kind)
                if kind == "gpus":
                    item = up.gpu(item, loc)
                elif kind == "stacks":
                    item = up.stack(item, loc)
            new.append(item)
        out[kind] = new
    return out, up.warnings
