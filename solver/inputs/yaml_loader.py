"""The YAML loaders of yaml_safe.py: PyYAML's safe loader with YAML 1.2 core-schema scalars (`NO` stays a
string, `1e3` is a number) and a nesting limit, in two builds that give the same node tree and data.

- `PyLoader`, pure Python: the reference. Its errors (message and location) are the ones reported.
- `FAST_LOADER` (None when PyYAML was built without libyaml): libyaml scans and parses (C), PyYAML's
  composer builds the node tree from libyaml's events, and `PyLoader`'s resolvers and constructors make
  the data. The shipped catalog reads in about a sixth of the time (issue 26).

`yaml_safe._parse` takes the fast one for text where the two agree (`libyaml_agrees`) and reads the text
again with `PyLoader` whenever the fast one raises, which it does on any error and on the few things
libyaml 0.2.5 reads otherwise (`NotLikePyYAML`). tests/inputs/test_fast_load.py holds the two to the same
data, node tree (tags, values, styles, marks) and errors, on every shipped file and a seeded fuzz.
"""
from __future__ import annotations

import math
import re

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

MAX_DEPTH = 50

_INT_12 = re.compile(r"^[-+]?[0-9]+$")
_FLOAT_12 = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$")


class TooDeep(yaml.MarkedYAMLError):
    """Nesting beyond MAX_DEPTH, found while composing (located at the node that goes too deep)."""


class _DepthLimit(Composer):
    """PyYAML's composer with a nesting limit checked while composing.

    Aliases are not counted: a file `yaml.safe_dump` wrote for shared lists holds hundreds of
    them. What an alias bomb costs is its expanded size, which `read_yaml` checks (memoised, without
    expanding) against MAX_EXPANDED_VALUES; the 10 MB file cap bounds the parse itself. The depth
    is checked here, before PyYAML's recursive composer can exhaust Python's stack, so a deeply
    nested file is a located error rather than a RecursionError.
    """

    depth = 0

    def compose_node(self, parent, index):
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH + 1:
                mark = self.peek_event().start_mark
                raise TooDeep(problem=f"nesting deeper than {MAX_DEPTH} levels: flatten the structure",
                              problem_mark=mark)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class PyLoader(_DepthLimit, yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars and the nesting limit, in pure Python."""

    yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in v if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


for _first in "-+0123456789.":
    PyLoader.add_implicit_resolver("tag:yaml.org,2002:int", _INT_12, list(_first))
    PyLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list(_first))
PyLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def _construct_int(loader, node):
    return int(loader.construct_scalar(node).replace("_", ""))


def _construct_float(loader, node):
    text = loader.construct_scalar(node).lower()
    if text.endswith("inf"):
        return -math.inf if text.startswith("-") else math.inf
    if text.endswith("nan"):
        return math.nan
    return float(text)


PyLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
PyLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)


class NotLikePyYAML(yaml.YAMLError):
    """libyaml read something PyYAML reads otherwise: `PyLoader` reads the text again."""


def _fast_loader() -> type | None:
    """`PyLoader` reading its events from libyaml's parser, or None without libyaml.

    Composing stays PyYAML's Python composer with the nesting limit (libyaml's own composer recurses in C
    and crashes on a deeply nested file; a leaner composer of our own saved 2 ms more on the catalog, not
    worth a second composer to keep faithful). Two event details are put back as PyYAML gives them: a plain
    scalar's style is None (libyaml says ''; yaml_safe's YAML 1.1 integer check reads it) and an indentless
    sequence's flow style is None (libyaml says False).
    """
    try:
        from yaml._yaml import CParser
    except ImportError:  # PyYAML built without libyaml
        return None

    class FastLoader(CParser, PyLoader):
        """libyaml events → PyYAML's composer (with the nesting limit) → `PyLoader`'s resolvers and constructors."""

        get_single_node = Composer.get_single_node  # not CParser's C composer
        get_node = Composer.get_node
        check_node = Composer.check_node

        def __init__(self, stream: str):
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            self.text, self.flow = stream, 0

        def compose_scalar_node(self, anchor):
            event = self.peek_event()
            if event.tag == "!" or (self.flow and event.style == "" and (event.value == "" or "?" in event.value)):
                # `!` alone resolves otherwise; libyaml places an empty value in a flow collection at the next
                # token, not after the ':', and takes '?' into a plain scalar there, where PyYAML ends the scalar
                raise NotLikePyYAML(f"a scalar libyaml reads otherwise: {event.tag or ''} {event.value!r}")
            node = super().compose_scalar_node(anchor)
            if node.style == "":
                node.style = None
            return node

        def compose_sequence_node(self, anchor):
            event = self.peek_event()
            first = event.end_mark.index  # a block sequence's first '-'; after it for an indentless sequence
            self.flow += bool(event.flow_style)
            try:
                node = super().compose_sequence_node(anchor)
            finally:
                self.flow -= bool(event.flow_style)
            if node.flow_style is False and self.text[first:first + 1] != "-":
                node.flow_style = None
            return node

        def compose_mapping_node(self, anchor):
            flow = bool(self.peek_event().flow_style)
            self.flow += flow
            try:
                return super().compose_mapping_node(anchor)
            finally:
                self.flow -= flow

    return FastLoader


_BLOCK_HEADER_COMMENT = re.compile(r"[|>][-+0-9]*#")


def libyaml_agrees(text: str) -> bool:
    """Text where libyaml's events are PyYAML's, marks included: no tab (libyaml takes tabs as
    spaces where PyYAML refuses them), no byte order mark (libyaml leaves it out of a mark's index),
    a final line break (at the end of the text libyaml moves the end marks to a new line) and no `|#`
    or `>-#` (libyaml reads a block scalar's header with a comment right after it, PyYAML refuses it)."""
    return ("\t" not in text and "\ufeff" not in text and text.endswith("\n")
            and _BLOCK_HEADER_COMMENT.search(text) is None)


FAST_LOADER = _fast_loader()
