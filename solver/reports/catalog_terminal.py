"""The `catalog` command in the terminal: the catalog as width-aware tables."""
from __future__ import annotations

from rich.table import Table

from ..inputs.schema import Catalog
from .tables import Column, make_table, price_text
from .text import safe


def _efficiency(gpu) -> str:
    """GEMM efficiency of the compute model (bf16/fp8), or the flat compute efficiency."""
    if gpu.compute_model is not None:
        eta = gpu.compute_model.gemm_efficiency
        return f"GEMM {eta['bf16']:.2f}/{eta['fp8']:.2f}"
    return f"{gpu.compute_efficiency['bf16']:.2f}/{gpu.compute_efficiency['fp8']:.2f}"


def _table(title: str, columns: tuple[str, ...], rows: list[tuple], width: int | None = None,
           kinds: str = "") -> Table:
    """A catalog table that fits `width`: `kinds` gives each column's kind, "n" a number (never cut),
    "t" text that wraps, "1"…"9" text left out first at narrow widths (highest first; the caption
    names it); every cell is catalog text or a number formatted from it."""
    kinds = kinds.ljust(len(columns), "t")
    cols = []
    for i, header in enumerate(columns):
        cells = [safe(str(row[i])) for row in rows]
        kind = kinds[i]
        cols.append(Column(header, cells, number=kind == "n", drop=int(kind) if kind.isdigit() else 0,
                           min_width=8 if i else 12))
    return make_table(title, cols, width)


def catalog_tables(cat: Catalog, width: int | None = None) -> list[Table]:
    """The catalog as five tables: GPUs, platforms, NICs and switches, links, racks and facility."""
    gpus = _table("GPUs", ("id", "name", "bf16 TFLOP/s", "fp8 TFLOP/s", "HBM GB", "TDP W", "η bf16/fp8"), [
        (g.id, g.name, f"{g.dense_tflops['bf16']:,.0f}", f"{g.dense_tflops['fp8']:,.0f}", f"{g.hbm_gb:g}", f"{g.tdp_w:,.0f}",
         _efficiency(g)) for g in cat.gpus], width, "t2nnnn1")
    platforms = _table("platforms", ("id", "gpu", "GPUs/domain", "GPUs/node", "NVLink GB/s", "rails", "NICs", "unit",
                                     "price", "kW", "date"), [
        (p.id, p.gpu, str(p.gpus_per_domain), str(p.gpus_per_node), f"{p.nvlink_gbyte_s:g}",
         ",".join(map(str, p.rails_per_node_options)), ",".join(p.compatible_nics), p.unit, price_text(p),
         f"{p.unit_power_kw:g}", p.price_date) for p in cat.platforms], width, "ttnnn3t4nn2")
    network = _table("NICs and switches", ("id", "kind", "fabric", "generation", "speed / radix", "price", "W", "date"),
                     [(n.id, "NIC", n.fabric, n.generation, f"{n.speed_gbps:g} Gb/s", price_text(n), f"{n.power_w:g}",
                       n.price_date) for n in cat.nics]
                     + [(s.id, "switch", s.fabric, s.generation, f"{s.radix}×{s.port_speed_gbps:g}G"
                         + "".join(f", {b * s.radix}×{s.port_speed_gbps / b:g}G split" for b in s.breakout), price_text(s),
                         f"{s.power_w:g}", s.price_date) for s in cat.switches], width, "t3t4tnn2")
    links = _table("links (per link: cable + modules at both ends)",
                   ("id", "generation", "tier", "medium", "reach m", "$ per link", "W per link", "date"), [
        (x.id, x.generation, x.tier, x.medium, f"{x.max_reach_m:g}", price_text(x, f"{x.usd_per_link:,.0f}"),
         f"{x.w_per_link:g}", x.price_date) for x in cat.links], width, "t3tt2nn1")
    racks = _table("racks and facility", ("id", "name", "usable kW", "usable RU", "price", "date"), [
        (r.id, r.name, f"{r.usable_kw:g}", str(r.usable_ru), price_text(r), r.price_date) for r in cat.racks], width, "t2nnn1")
    if cat.facility is not None:
        f = cat.facility
        d = f.link_distance_m
        facility = safe(f"facility: PUE {f.pue:g}, ${f.usd_per_kwh:g}/kWh, compute rack {f.compute_rack}, network rack "
                        f"{f.network_rack}, link distances {d.node_leaf:g} / {d.leaf_spine:g} / {d.spine_core:g} m")
        racks.caption = facility + (f"; {racks.caption}" if racks.caption else "")
    tables = [gpus, platforms, network, links, racks, *orderable_tables(cat)]
    if cat.rentals:
        tables.append(_table("rentals (rent or buy)", ("id", "platform", "network", "$/GPU-h", "term", "date"), [
            (r.id, r.platform, f"{r.rails_per_node}×{r.nic_speed_gbps:g}G", f"{r.usd_per_gpu_hour:,.2f}"
             + (" est." if r.price_is_estimate else ""), r.term + (f", {r.commitment_months:g} months"
                                                                     if r.commitment_months else ""), r.price_date)
            for r in cat.rentals], width, "tt2nt1"))
    return tables


def orderable_tables(cat: Catalog) -> list[Table]:
    """The NIC configurations and site lines (issue 24), when the catalog has them."""
    out = []
    if cat.nic_configurations:
        out.append(_table("NIC configurations (reference = in the design space by default)",
                          ("id", "platform", "cabled", "installed", "included", "reference"), [
            (c.id, c.platform, str(c.rails_per_node), str(c.installed_per_node), "yes" if c.included else "no",
             "yes" if c.reference else "no") for c in cat.nic_configurations]))
    if cat.site_lines:
        out.append(_table("site lines (capex_scope: complete)", ("id", "category", "per", "count", "price", "date"), [
            (x.id, x.category, x.per + (f" of {x.nodes_per_scalable_unit} nodes" if x.nodes_per_scalable_unit else ""),
             str(x.per_count), "in the unit" if x.included else price_text(x), x.price_date) for x in cat.site_lines]))
    return out
