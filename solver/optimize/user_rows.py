"""A user's own constraints on the training MILP (issue 39 item 5), without editing the package.

A user constraint is a function of the built model that returns one linear row (a Pyomo relational expression), a
list of rows, or None when it added its rows itself. It reads the decisions and expressions every family shares:

    m.x[a]                    1 when architecture a is bought          m.data.archs[a].arch: platform, nic,
    m.nodes[a], m.gpus[a]     nodes (spares included), GPUs of a         rails_per_node, switch, fabric, …
    m.domains[a]              NVLink domains of the job                m.switches[a][role], m.links[a][tier]
    m.total_gpus, m.total_racks, m.total_facility_kw, m.total_capex_musd (capex in M$), m.total_tco_musd
    m.w[s,j,a]                1 when shape s runs with its j-th d on a (m.data.space.shapes[s].layout(d))

`architectures(m, platform="h200-hgx")` gives the indices a whose architecture matches. Example — at most 64 H200
nodes, whatever else is cheapest:

    def at_most_64_h200_nodes(m):
        return sum(m.nodes[a] for a in architectures(m, platform="h200-hgx")) <= 64

    result = solver.api.solve(scenario, catalog, constraints=[at_most_64_h200_nodes])

or, around any other entry point that builds the model (the frontier, the next faster design):

    with user_constraints(at_most_64_h200_nodes):
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
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import pyomo.core as pyo

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


def architectures(m: Any, **fields: Any) -> list[int]:
    """Indices a of the model's architectures whose `Architecture` fields equal the given values
    (platform, nic, rails_per_node, switch, oversubscription, fabric, …)."""
    return [a for a in m.A if all(getattr(m.data.archs[a].arch, name) == value for name, value in fields.items())]


def add_user_rows(m: Any) -> None:
    """Block m.user: user_k, the rows the k-th active user constraint returns (a relational expression or a list of
    them). A row that no decision enters is a constant: true, it is left out; false, no design meets it, and the
    row Σ_a x[a] ≤ 0 (against one_design) says so."""
    b = m.user = pyo.Block()
    for k, function in enumerate(active()):
        returned = function(m)
        rows = [] if returned is None else list(returned) if isinstance(returned, (list, tuple)) else [returned]
        listed = pyo.ConstraintList()
        b.add_component(f"user_{k}", listed)
        for row in rows:
            if isinstance(row, bool) or (hasattr(row, "is_constant") and row.is_constant()):
                if not pyo.value(row):
                    listed.add(sum(m.x[a] for a in m.A) <= 0)
                continue
            listed.add(row)
