"""A user's own constraints on the training MILP (issue 39 item 5), without editing the package.

A user constraint is a function of the built model that returns one linear row (a Pyomo relational expression), a
list of rows, or None when it added its rows itself. It reads the decisions and expressions every family shares:

    m.x[a]                    1 when architecture a is bought          m.data.archs[a].arch: platform, nic,
    m.nodes[a], m.gpus[a]     nodes (spares included), GPUs of a         rails_per_node, switch, fabric, …
    m.domains[a]              NVLink domains of the job                m.switches[a][role], m.links[a][tier]
    m.total_gpus, m.total_racks, m.total_facility_kw, m.total_capex_musd (capex in M$), m.total_tco_musd
    m.w[s,j,a]                1 when shape s runs with its j-th d on a (m.data.space.shapes[s].layout(d))

`architectures(m, platform="hgx-h200")` gives the indices a whose architecture matches. Example — at most 64 H200
nodes, whatever else is cheapest:

    def at_most_64_h200_nodes(m):
        return sum(m.nodes[a] for a in architectures(m, platform="hgx-h200")) <= 64

    result = solver.api.solve(scenario, catalog, constraints=[at_most_64_h200_nodes])

or, around any other entry point that builds the model (the frontier, the next faster design):

    with solver.api.user_constraints(at_most_64_h200_nodes):
        front = solver.api.frontier(scenario, catalog)

The rows go into the block m.user (`user_<k>` for the k-th function), built by `model.build_model`, so every model
a search builds inside the call carries them: the K-best loop and its no-good re-solves, `fastest`'s second stage,
the layout tie-break re-solve, the frontier, the next faster design and the infeasibility diagnosis. What does not
solve the model is made exact instead: while user rows are active the design space is built unpruned (`prune =
"none"`: the model's rows, the user's included, decide every point — a row may favour a bigger or costlier design,
which the dominance pruning would have dropped), the bound pruning (`ranking.prune_by_bounds`,
`ranking._prune_slow_points`) is off (its bounds come from designs it evaluates without the user's rows), and the
equal-cost layout swap (`ties.faster_at_equal_cost`) is off (it evaluates layouts outside the model). Not covered:
the serving fleet MILP, the multi-period plan, and sweep points solved in other processes (`jobs > 1`): the rows
are a Python function of this process.
"""
from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from ..errors import InputError

UserConstraint = Callable[[Any], Any]  # model -> a row, a list of rows, or None

_ACTIVE: ContextVar[tuple[UserConstraint, ...]] = ContextVar("fabricplan_user_constraints", default=())


@contextlib.contextmanager
def user_constraints(*functions: UserConstraint) -> Iterator[None]:
    """Every training model built inside the `with` carries these functions' rows (after any already active)."""
    token = _ACTIVE.set(_ACTIVE.get() + tuple(functions))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active() -> tuple[UserConstraint, ...]:
    """The user constraints in force (empty: none)."""
    return _ACTIVE.get()


def in_force(scenario: Any = None) -> bool:
    """Whether user rows apply to a model of this scenario: a function is active, or the scenario names rows
    (`constraints.user`)."""
    return bool(active()) or bool(scenario is not None and getattr(scenario.constraints, "user", None))


def exact_prune(prune: str, scenario: Any) -> str:
    """The design space's pruning with user rows in force: "none" (every placeable point; the model's rows,
    the user's included, decide), else `prune`."""
    return "none" if in_force(scenario) else prune


CATALOG_FIELDS = {"platform": "platforms", "nic": "nics", "switch": "switches"}
"""`architectures` fields whose values are catalog ids: a value the catalog does not have is a typo, not a
selection that matches nothing."""


def architectures(m: Any, **fields: Any) -> list[int]:
    """Indices a of the model's architectures whose `Architecture` fields equal the given values
    (platform, nic, rails_per_node, switch, oversubscription, fabric, …). A platform, NIC or switch id the catalog
    does not have raises ValueError naming the nearest ids (a row over a typo would otherwise hold trivially)."""
    catalog = m.data.space.catalog
    for name, value in fields.items():
        if name in CATALOG_FIELDS and value not in catalog.by_id(CATALOG_FIELDS[name]):
            known = sorted(catalog.by_id(CATALOG_FIELDS[name]))
            near = difflib.get_close_matches(str(value), known, n=3)
            raise ValueError(f"architectures({name}={value!r}): no {name} with that id in the catalog"
                             + (f" (nearest: {', '.join(near)})" if near else ""))
    return matching(m, fields)


def matching(m: Any, fields: dict[str, Any]) -> list[int]:
    """Indices a of the model's architectures whose `Architecture` fields equal `fields` (no id check: a scenario
    row's ids are checked against the catalog when it is loaded, `check_user_rows`)."""
    return [a for a in m.A if all(getattr(m.data.archs[a].arch, name) == value for name, value in fields.items())]


def add_user_rows(m: Any) -> None:
    """Block m.user: user_k, the rows the k-th active user constraint returns (a relational expression or a list of
    them); scenario_rows[i], the scenario's `constraints.user` rows (Σ_terms c·Σ_{a matching} q[a] (≤ | ≥ | =) rhs,
    `scenario_row`). A row that no decision enters is a constant: true, it is left out; false, no design meets it,
    and the row Σ_a x[a] ≤ 0 (against one_design) says so."""
    import pyomo.core as pyo

    b = m.user = pyo.Block()
    for k, function in enumerate(active()):
        returned = function(m)
        listed = pyo.ConstraintList()
        b.add_component(f"user_{k}", listed)
        _add_rows(m, listed, [] if returned is None else list(returned) if isinstance(returned, (list, tuple))
                  else [returned])
    rows = getattr(m.data.space.scenario.constraints, "user", None)
    if rows:
        b.scenario_rows = pyo.ConstraintList()
        _add_rows(m, b.scenario_rows, [scenario_row(m, r.row) for r in rows])


def _add_rows(m: Any, listed: Any, rows: list) -> None:
    import pyomo.core as pyo

    for row in rows:
        if isinstance(row, bool) or (hasattr(row, "is_constant") and row.is_constant()):
            if not pyo.value(row):
                listed.add(sum(m.x[a] for a in m.A) <= 0)
            continue
        listed.add(row)


def quantity(m: Any, name: str, a: int) -> Any:
    """Quantity `name` of architecture a as a model expression (inputs/user_row_schema.py QUANTITIES)."""
    if name == "nodes":
        return m.nodes[a]
    if name == "gpus":
        return m.gpus[a]
    if name == "domains":
        return m.domains[a]
    if name == "switches":
        return sum(m.switches[a].values())
    if name == "racks":
        return m.compute_racks[a] + m.network_racks[a]
    if name == "chosen":
        return m.x[a]
    if name == "capex_usd":
        from .data import MUSD  # here, not at the top: `validate` imports this module and must not load numpy

        return m.capex[a] / MUSD
    if name == "facility_kw":
        return m.data.pue * m.it_power_kw[a]
    raise ValueError(f"unknown quantity {name!r}")


def scenario_row(m: Any, row: Any) -> Any:
    """One `constraints.user` row (a LinearRow) as a relational expression on the model; a constant (bool) when
    no architecture matches any of its selectors."""
    lhs: Any = 0
    for term in row.terms:
        match = {} if term.field is None else {
            term.field: int(term.value) if term.field == "rails_per_node" else term.value}
        for a in matching(m, match):
            lhs = lhs + term.coefficient * quantity(m, term.quantity, a)
    if row.sense == "<=":
        return lhs <= row.rhs
    return lhs >= row.rhs if row.sense == ">=" else lhs == row.rhs


def keeps_row_quantities(scenario: Any, design: Any, other: Any) -> bool:
    """Whether `other` (a layout of the same architecture, `ties.faster_at_equal_cost`) has every quantity a
    `constraints.user` row can read equal to `design`'s, so it meets the rows `design` meets (True without rows)."""
    if not getattr(scenario.constraints, "user", None):
        return True

    def counts(d: Any) -> tuple:
        c = d.cost
        return (d.architecture, c.nodes, c.gpus, c.domains, c.fabric.switches, c.racks, round(c.capex_usd, 2),
                round(c.facility_power_kw, 9))
    return counts(design) == counts(other)


def check_user_rows(loaded: Any, catalog: Any) -> None:
    """Every selector of the scenario's `constraints.user` names something the catalog has (a platform, NIC or
    switch id, a fabric family): else a located InputError (exit 2)."""
    from ..fabrics import FAMILIES

    rows = getattr(loaded.scenario.constraints, "user", None) or []
    known = {"platform": set(catalog.by_id("platforms")), "nic": set(catalog.by_id("nics")),
             "switch": set(catalog.by_id("switches")), "fabric": set(FAMILIES)}
    problems = []
    for i, r in enumerate(rows):
        for term in r.row.terms:
            ids = known.get(term.field or "")
            if ids is not None and term.value not in ids:
                close = difflib.get_close_matches(str(term.value), list(ids), n=1, cutoff=0.5)
                hint = f": did you mean '{close[0]}'?" if close else f" (known: {', '.join(sorted(ids))})"
                problems.append(loaded.doc.problem(("constraints", "user", i, "expr"),
                                                   f"no {term.field} '{term.value}' in the catalog{hint}", r.expr))
    if problems:
        raise InputError(problems)


def refuse_user_rows(loaded: Any, constraints: Any, where: str) -> None:
    """User rows given where they would not apply (the serving fleet MILP, the plan): a located InputError."""
    if constraints or active() or getattr(loaded.scenario.constraints, "user", None):
        raise InputError([loaded.doc.problem(("constraints", "user"), (
            f"your own rows (constraints.user, solve(constraints=…)) are applied by the training MILP only, not by "
            f"{where}: remove them"))])
