"""A scenario's own linear rows (`constraints.user`, issue 39 item 5), in a tiny grammar read without `eval`.

    constraints:
      user:
        - expr: "nodes[hgx-h200] <= 64"                  # at most 64 nodes of that platform
        - expr: "gpus[nic=cx7-ndr] + 2 * switches <= 900"
        - expr: "chosen[fabric=rail-only] == 0"          # no rail-only fabric

A row is `side (<= | >= | ==) side`; a side is a sum of terms `[number *] quantity[selector]` or numbers, joined by
`+` and `-`. A quantity is summed over the architectures its selector matches (all without one): nodes (the job's
and the spares), gpus, domains (NVLink domains of the job), switches (every role), racks (compute and network),
chosen (1 when that architecture is bought, else 0), capex_usd, facility_kw (PUE · IT kW). A selector is a platform
id, or `field=value` with field one of platform, nic, switch, fabric, rails_per_node. The optimiser adds each row to
the training MILP (optimize/user_rows.py, block m.user, row `scenario_rows[i]`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from pydantic import field_validator

from .schema_base import Strict

QUANTITIES = ("nodes", "gpus", "domains", "switches", "racks", "chosen", "capex_usd", "facility_kw")
SELECTOR_FIELDS = ("platform", "nic", "switch", "fabric", "rails_per_node")
SENSES = ("<=", ">=", "==")
MAX_CHARS = 400

_TOKEN = re.compile(r"\s*(?:(?P<number>[0-9][0-9_]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|(?P<sense><=|>=|==)"
                    r"|(?P<op>[-+*])|(?P<name>[a-z_][a-z0-9_]*)(?:\[(?P<selector>[^\]]*)\])?)")
_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Term:
    """coefficient · quantity summed over the architectures whose `field` equals `value` (all when field is None)."""

    coefficient: float
    quantity: str
    field: str | None = None
    value: str | None = None


@dataclass(frozen=True)
class LinearRow:
    """Σ terms (sense) rhs: every quantity moved to the left, every number to the right."""

    terms: tuple[Term, ...]
    sense: str
    rhs: float


def _selector(text: str | None) -> tuple[str | None, str | None]:
    if text is None:
        return None, None
    if "," in text:
        raise ValueError(f"a selector names one field (got '[{text}]'): a row's term sums over one filter; to combine "
                         "filters, write the row in Python (solve(constraints=[fn]), docs/architecture.md)")
    field, _, value = text.strip().rpartition("=")
    field, value = field.strip() or "platform", value.strip()
    if field not in SELECTOR_FIELDS:
        raise ValueError(f"unknown selector field '{field}' (use one of {', '.join(SELECTOR_FIELDS)})")
    if not _VALUE.fullmatch(value):
        raise ValueError(f"selector '[{text}]' needs an id or field=value")
    if field == "rails_per_node" and not value.isdigit():
        raise ValueError(f"rails_per_node takes a whole number (got '{value}')")
    return field, value


def _tokens(text: str) -> list[tuple[str, str, str | None]]:
    out, pos = [], 0
    while pos < len(text.rstrip()):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ValueError(f"cannot read '{text[pos:].strip()[:20]}' at character {pos + 1}")
        kind = match.lastgroup if match.lastgroup != "selector" else "name"
        out.append((kind or "", match.group(kind or 0), match.group("selector")))
        pos = match.end()
    return out


def _side(tokens: list[tuple[str, str, str | None]], sign: float) -> tuple[list[Term], float]:
    """A sum of terms; returns its quantity terms and its constant, both times `sign`."""
    terms, constant, expect_term, term_sign, coef = [], 0.0, True, 1.0, None
    for kind, text, selector in tokens:
        if expect_term and kind == "op" and text in "+-" and coef is None:
            term_sign *= -1.0 if text == "-" else 1.0
        elif expect_term and kind == "number" and coef is None:
            coef = float(text.replace("_", ""))
            expect_term = False
        elif kind == "op" and text == "*" and coef is not None and not expect_term:
            expect_term = True
        elif expect_term and kind == "name":
            if text not in QUANTITIES:
                raise ValueError(f"unknown quantity '{text}' (use one of {', '.join(QUANTITIES)})")
            terms.append(Term(sign * term_sign * (1.0 if coef is None else coef), text, *_selector(selector)))
            expect_term, term_sign, coef = False, 1.0, None
        elif not expect_term and kind == "op" and text in "+-":
            if coef is not None:
                constant += sign * term_sign * coef
            expect_term, term_sign, coef = True, -1.0 if text == "-" else 1.0, None
        else:
            raise ValueError(f"unexpected '{text}'")
    if expect_term:
        raise ValueError("a side ends without a term")
    if coef is not None:
        constant += sign * term_sign * coef
    return terms, constant


def parse_row(text: str) -> LinearRow:
    """The row `text` states, or ValueError saying what is wrong. Linear only: a quantity times a quantity, a
    division or a bracket other than a selector is not in the grammar."""
    if len(text) > MAX_CHARS:
        raise ValueError(f"a row is at most {MAX_CHARS} characters")
    tokens = _tokens(text)
    senses = [i for i, (kind, _, _) in enumerate(tokens) if kind == "sense"]
    if len(senses) != 1:
        raise ValueError("a row needs exactly one of <=, >=, ==")
    at = senses[0]
    left, left_constant = _side(tokens[:at], 1.0)
    right, right_constant = _side(tokens[at + 1:], -1.0)
    terms = tuple(left + right)
    if not terms:
        raise ValueError("a row needs at least one quantity (nodes, gpus, …)")
    if not all(math.isfinite(t.coefficient) for t in terms) or not math.isfinite(left_constant + right_constant):
        raise ValueError("a number is too large to be a float (write it below 1e308)")
    return LinearRow(terms, tokens[at][1], -(left_constant + right_constant) + 0.0)


class UserRow(Strict):
    """One linear row of your own on the training MILP."""

    expr: str
    """`side (<= | >= | ==) side`, each side a sum of `[number *] quantity[selector]` and numbers; quantities: nodes,
    gpus, domains, switches, racks, chosen, capex_usd, facility_kw; selector: a platform id or field=value (platform,
    nic, switch, fabric, rails_per_node). Example: "nodes[hgx-h200] <= 64"."""

    @field_validator("expr")
    @classmethod
    def _readable(cls, value: str) -> str:
        parse_row(value)
        return value

    @property
    def row(self) -> LinearRow:
        return parse_row(self.expr)
