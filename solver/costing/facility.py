"""The bill-of-materials lines of a design a buyer can order (SPEC §5.2), registered in the one
category table of `costing/table.py`:

- paid-for NICs left uncabled: on-board scale-out NICs beyond the rails, `(installed − rails) · nodes`,
  at $0 (their price is in the unit's) and no power;
- site lines: storage fabric, in-band and out-of-band management networks, liquid-cooling plant and
  installation, sized from the reference architectures (catalog `site_lines`):

      per scalable_unit: count = per_count · ⌈nodes / nodes_per_scalable_unit⌉
      per unit:          count = per_count · (units + spare units)
      per node:          count = per_count · nodes

The counts are integers of a design's nodes, so the evaluator and the bound pruning call `site_count`
directly and the optimisation model sums `site_count` over its points (one binary per point: exact).
This module returns each line's fields; table.py makes them `Line`s (no import cycle).
"""
from __future__ import annotations

from typing import Any

from ..inputs.nic_configs import SITE_CATEGORIES, NicConfiguration, SiteLine
from ..inputs.schema import Catalog, Link, Platform, Scenario
from ..integers import ceil_int

# the price-factor category of each site category (plan price factors; support contracts by fraction apply
# to the hardware ones): storage and management are switches, the cooling plant is like racks
SITE_PRICE_CATEGORY = {"storage": "switch", "management": "switch", "cooling": "rack", "installation": "extra"}
CATEGORY_NOTES = {
    "storage": "storage fabric switches (reference architecture, per scalable unit)",
    "management": "in-band and out-of-band management switches (reference architecture, per scalable unit)",
    "cooling": "liquid-cooling plant (coolant distribution units) for liquid-cooled racks",
    "installation": "installation: rack and stack, cabling, burn-in",
}
SHORT = {"compute": "compute", "spares": "spares", "nic": "NICs", "switch": "fabric switches", "link": "cables and optics",
         "rack": "racks", "storage": "storage fabric", "management": "management networks", "cooling": "cooling plant",
         "installation": "installation", "extra": "extra_costs", "contingency": "contingency"}
LEFT_OUT = ("storage system (checkpoint capacity and write bandwidth: assumed in goodput, not bought)",
            "storage and in-band switch-to-switch cables", "buildings and power distribution", "software and support")


def capex_scope_text(categories: set[str]) -> tuple[str, str]:
    """(what capex includes, what it leaves out) for a bill of materials with these categories (the
    Summary sheet says both, SPEC §5.2)."""
    includes = [SHORT[c] for c in SHORT if c in categories]
    missing = [SHORT[c] for c in SITE_CATEGORIES if c not in categories]
    return ", ".join(includes), ", ".join(missing + list(LEFT_OUT))


def configurations(catalog: Catalog, platform_id: str) -> list[NicConfiguration]:
    """The catalog's NIC configurations of one platform (empty: every rail count of the platform)."""
    return [c for c in catalog.nic_configurations if c.platform == platform_id]


def config_for(catalog: Catalog, platform_id: str, rails: int) -> NicConfiguration | None:
    """The configuration of a platform that cables `rails` NICs per node (None when the catalog lists none)."""
    return next((c for c in configurations(catalog, platform_id) if c.rails_per_node == rails), None)


def allowed_rails(scenario: Scenario, catalog: Catalog, platform: Platform) -> list[int]:
    """Rail counts of the design space for a platform: those of its reference configurations, of the
    configurations `constraints.nic_configurations` opens (`any`, or ids), and a pinned rail count
    (an explicit request). A platform without configurations keeps every rails_per_node_options."""
    configs = configurations(catalog, platform.id)
    if not configs:
        return list(platform.rails_per_node_options)
    opened = scenario.constraints.nic_configurations
    keep = [c for c in configs if c.reference or opened == "any" or (isinstance(opened, list) and c.id in opened)
            or c.rails_per_node == scenario.pin.rails_per_node]
    return [r for r in platform.rails_per_node_options if any(c.rails_per_node == r for c in keep)]


def site_lines_for(catalog: Catalog, platform_id: str, scope: str, fabric: str | None = None) -> tuple[SiteLine, ...]:
    """The site lines of a platform on a compute fabric (infiniband, ethernet; none when scenario.capex_scope is
    compute_fabric_only)."""
    if scope != "complete":
        return ()
    return tuple(s for s in catalog.site_lines if platform_id in s.platforms
                 and (s.fabrics is None or fabric is None or fabric in s.fabrics))


def site_count(line: SiteLine, units: int, nodes: int, cabled_nodes: int | None = None) -> int:
    """Items of one site line for `units` compute units (spares included) of `nodes` nodes; per scalable unit,
    the SUs of the `cabled_nodes` (job nodes and the spares packed into their free ports, SPEC §5.3; None = all)."""
    if line.per == "scalable_unit":
        assert line.nodes_per_scalable_unit is not None
        su_nodes = nodes if cabled_nodes is None else cabled_nodes
        return line.per_count * ceil_int(su_nodes / line.nodes_per_scalable_unit)
    if line.per == "cluster":
        return line.per_count
    return line.per_count * (units if line.per == "unit" else nodes)


def uncabled_nic_lines(parts: Any, q: Any) -> list[dict]:
    """Paid-for on-board NICs beyond the rails: (installed − rails) · nodes, $0, no power."""
    config = parts.nic_config
    if config is None or config.uncabled_per_node == 0:
        return []
    n = config.uncabled_per_node
    what = f"{n} × {parts.nic_label} per {'tray' if parts.platform.unit == 'domain' else 'node'}, included, not cabled"
    return [dict(category="nic", part=f"{config.id}/uncabled", description=what, quantity=n * q.nodes,
                 unit_price_usd=0.0, power_w=0.0, priced=_Included(config.source), stock=f"{config.id}/uncabled",
                 owned_from=(f"{config.id}/uncabled", 0, 1), included=True)]


def site_category_lines(category: str):
    """The category function of one site category: its lines for quantities q."""

    def lines(parts: Any, q: Any) -> list[dict]:
        out = []
        for s in parts.site:
            if s.category != category:
                continue
            count = q.site[s.id] if q.site is not None else site_count(s, q.units + q.spare_units, q.nodes, q.cabled_nodes)
            what = f"{s.name}" + (" (in the unit price)" if s.included else "")
            out.append(dict(category=category, part=s.id, description=what, quantity=count,
                            unit_price_usd=s.unit_price_usd, power_w=s.power_w, priced=s, included=s.included,
                            stock=f"{s.id}/{parts.platform.id}", owned_from=owned_from(s, parts.platform)))
        return out

    return lines


def twin_port_node_end(links: dict[str, Link], config: NicConfiguration | None, node_link: str) -> None:
    """The link that leaves a node (`node_link`: its fabric family's first tier, the trees' node–leaf link) whose
    cages are twin-port (SPEC §5.3: DGX H100/B200 take 4 twin-port OSFP for 8 NICs): an optical link's node-end
    module becomes the switch end's twin-port one, serving `node_end_links_per_module` links (in place). Copper
    (no priced modules) is unchanged."""
    link = links.get(node_link)
    if config is None or config.node_end_links_per_module < 2 or link is None:
        return
    if link.far_end_module_usd == 0 and link.far_end_module_w == 0:
        return
    links[node_link] = link.model_copy(update={"far_end_module_usd": link.switch_end_module_usd,
                                               "far_end_module_w": link.switch_end_module_w,
                                               "far_end_links_per_module": config.node_end_links_per_module})


def owned_from(line: SiteLine, platform: Platform) -> tuple[str, int, int]:
    """Owned units of the platform bring their own site items (they were installed with their storage and
    management networks): ⌊owned · num / den⌋ items, per scalable unit pro rata."""
    per_unit = platform.nodes_per_domain if platform.unit == "domain" else 1
    if line.per == "cluster":  # owned items of the line itself
        return line.id, 1, 1
    if line.per == "scalable_unit":
        assert line.nodes_per_scalable_unit is not None
        return platform.id, line.per_count * per_unit, line.nodes_per_scalable_unit
    return platform.id, line.per_count * (per_unit if line.per == "node" else 1), 1


class _Included:
    """Price provenance of an item paid for in the platform's unit price."""

    price_is_estimate = False
    price_date = ""

    def __init__(self, source: str) -> None:
        self.price_source = f"included in the unit price ({source})"


__all__ = ["SITE_CATEGORIES", "allowed_rails", "config_for", "configurations", "site_count", "site_lines_for",
           "twin_port_node_end"]
