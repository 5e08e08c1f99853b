"""The fabric structures of a platform's performance classes (design space, issue 26): classes whose planes and pods
are the same have the same bytes and pod crossing at every point (`build._shapes_of_layout` evaluates each structure
once), and a class whose layout crosses no plane or oversubscribed pod tier at any d shares its fat-tree twin's shape
(`Shape.also`)."""
from __future__ import annotations

from ..perf.crossing import cross_plane_share, pod_crossing
from ..perf.hardware import Hardware
from ..perf.layout import LayoutShape
from ..perf.traffic import CLASS_NAMES
from .identity import PerfClass
from .scan import ScanContext, count_once_per_switch


def structure_key(hw: Hardware) -> tuple:
    """What, besides the layout, decides a class's bytes and pod crossing: the planes, and the
    pods of an oversubscribed tier above them."""
    pods = hw.above_pod_oversubscription != 1
    return hw.rail_planes, hw.planes_by_domain_position, pods, hw.pod_domains if pods else 0


def structure_groups(perfs: list[PerfClass], hws: dict) -> list[tuple[PerfClass, list[PerfClass]]]:
    """Performance classes grouped by fabric structure (first member, members); the plain fat-tree
    structure first (the others may share its shapes, `share_plain_shapes`)."""
    groups: dict[tuple, list[PerfClass]] = {}
    for p in perfs:
        groups.setdefault(structure_key(hws[p]), []).append(p)
    plain = (1, False, False, 0)
    return [(members[0], members) for key, members in sorted(groups.items(), key=lambda kv: kv[0] != plain)]


def plain_twin(perf: PerfClass) -> PerfClass:
    """The fat-tree class of the same platform, NIC, rails and leaf oversubscription."""
    return PerfClass(perf.platform, perf.nic, perf.rails_per_node, perf.oversubscription)


def share_plain_shapes(ctx: ScanContext, members: list[PerfClass], made: dict, tallies: dict,
                       choices: dict[PerfClass, int]) -> list[PerfClass]:
    """Attach each class whose plain (fat-tree) twin already has this shape to it (`Shape.also`), and offer its
    points to the cost bound as the class's own; return the classes that still need shapes of their own. A class
    attached (or whose twin has no shape) counts the points its twin does not keep as the twin does (`tallies`)."""
    rest = []
    for perf in members:
        twin = plain_twin(perf)
        if perf != twin and twin in made:
            count_once_per_switch(ctx, tallies[twin], choices[perf])
            shape = made[twin]
            if shape is not None:
                shape.also.append(perf)
                if ctx.bounds.bound is not None:
                    shared = ctx.layout_memo(shape.layout_shape, shape.gpus_per_domain_used)
                    ctx.bounds.bound.offer(perf, [shared.layout(d) for d in shape.d_values], ctx.inputs.spares, ctx.caches.costed)
        else:
            rest.append(perf)
    return rest


def crosses_nothing(ctx: ScanContext, lay: LayoutShape, g_used: int, ds: list[int], hw: Hardware) -> bool:
    """No class of the layout forwards bytes between planes or crosses an oversubscribed tier above the
    pods at any of the d values (perf/crossing.py): the step time is then the plain fat tree's at
    every d. Always true on a fat tree without an oversubscribed tier above the pods."""
    planes, pods = hw.rail_planes > 1, hw.above_pod_oversubscription != 1
    if not planes and not pods:
        return True
    shared = ctx.layout_memo(lay, g_used)
    for d in ds:
        layout = shared.layout(d)
        for n in CLASS_NAMES:
            if (planes and cross_plane_share(n, layout, hw)) or (pods and pod_crossing(n, layout, hw)):
                return False
    return True
