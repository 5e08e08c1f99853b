"""Small catalogs and scenarios with round numbers, shared by the fabric and costing tests (prices
and sizes here are independent of the shipped catalog, so every expected number is hand-checkable)."""
from __future__ import annotations

from solver.inputs.schema import Catalog, Scenario

SRC = {"source": "test", "price_source": "test", "price_date": "2025-01"}


def _link(link_id, generation, tier, medium, reach_m, cable, sw=(0, 0, 1), far=(0, 0, 1), breakout=1):
    """sw/far = (module_usd, module_w, links_per_module); breakout = the switch port split it is for."""
    return {"breakout": breakout,
        "id": link_id, "description": link_id, "generation": generation, "tier": tier, "medium": medium,
        "max_reach_m": reach_m, "cable_usd": cable,
        "switch_end_module_usd": sw[0], "switch_end_module_w": sw[1], "switch_end_links_per_module": sw[2],
        "far_end_module_usd": far[0], "far_end_module_w": far[1], "far_end_links_per_module": far[2],
        **SRC,
    }


def make_catalog(node_leaf_m=10.0, rack_kw=40.0) -> Catalog:
    return Catalog.model_validate({
        "gpus": [{
            "id": "gpu-t", "name": "GPU", "vendor": "v", "dense_tflops": {"bf16": 1000, "fp8": 2000},
            "hbm_gb": 180, "hbm_tbyte_s": 8, "tdp_w": 1000,
            "compute_efficiency": {"bf16": 0.4, "fp8": 0.3}, "compute_efficiency_source": "t", "source": "t",
        }],
        "platforms": [
            {"id": "hgx-t", "name": "HGX test", "gpu": "gpu-t", "gpus_per_domain": 8, "gpus_per_node": 8,
             "nodes_per_domain": 1, "nvlink_gbyte_s": 900, "nvlink_efficiency": 0.8,
             "rails_per_node_options": [1, 2, 4, 8], "compatible_nics": ["ndr-nic", "xdr-nic", "eth-nic"], "unit": "node",
             "unit_price_usd": 300_000, "unit_power_kw": 10.0, "unit_ru": 8, "includes_scaleout_nics": False,
             **SRC},
            {"id": "nvl72-t", "name": "NVL72 test", "gpu": "gpu-t", "gpus_per_domain": 72, "gpus_per_node": 4,
             "nodes_per_domain": 18, "nvlink_gbyte_s": 900, "nvlink_efficiency": 0.8,
             "rails_per_node_options": [4], "compatible_nics": ["xdr-nic"], "unit": "domain",
             "unit_price_usd": 3_000_000, "unit_power_kw": 120.0, "unit_ru": 48, "unit_is_rack": True,
             "includes_scaleout_nics": True, **SRC},
        ],
        "nics": [
            {"id": "ndr-nic", "name": "NDR NIC", "speed_gbps": 400, "fabric": "infiniband", "generation": "ndr",
             "power_w": 20, "efficiency": 0.9, "efficiency_source": "t", "unit_price_usd": 1_500, **SRC},
            {"id": "xdr-nic", "name": "XDR NIC", "speed_gbps": 800, "fabric": "infiniband", "generation": "xdr",
             "power_w": 25, "efficiency": 0.9, "efficiency_source": "t", "unit_price_usd": 2_000, **SRC},
            {"id": "eth-nic", "name": "Eth NIC", "speed_gbps": 400, "fabric": "ethernet", "generation": "800gbe",
             "power_w": 20, "efficiency": 0.9, "efficiency_source": "t", "unit_price_usd": 1_000, **SRC},
        ],
        "switches": [
            {"id": "ndr-64", "name": "NDR 64-port", "fabric": "infiniband", "generation": "ndr", "radix": 64,
             "port_speed_gbps": 400, "power_w": 1_000, "ru": 1, "unit_price_usd": 30_000, **SRC},
            {"id": "xdr-144", "name": "XDR 144-port", "fabric": "infiniband", "generation": "xdr", "radix": 144,
             "port_speed_gbps": 800, "power_w": 2_500, "ru": 4, "unit_price_usd": 100_000, **SRC},
            # 64 × 800G, each port usable as 2 × 400G (SN5600-like): serves the 400G eth-nic as 128 ports
            {"id": "eth-800", "name": "Ethernet 64 × 800G", "fabric": "ethernet", "generation": "800gbe", "radix": 64,
             "port_speed_gbps": 800, "breakout": [2], "power_w": 1_200, "ru": 2, "unit_price_usd": 40_000, **SRC},
        ],
        "links": [
            # NDR: passive copper node-leaf (3 m, no modules); optical node-leaf (twin-port at the
            # switch, single-port at the NIC); optical leaf-spine and spine-core (twin-port both ends).
            _link("ndr-nl-dac", "ndr", "node_leaf", "copper", 3, 100),
            _link("ndr-nl-opt", "ndr", "node_leaf", "optical", 50, 50, sw=(1_000, 15, 2), far=(600, 8, 1)),
            _link("ndr-ls-opt", "ndr", "leaf_spine", "optical", 100, 60, sw=(1_000, 16, 2), far=(1_000, 16, 2)),
            _link("ndr-sc-opt", "ndr", "spine_core", "optical", 500, 80, sw=(1_200, 17, 2), far=(1_200, 17, 2)),
            _link("xdr-nl-opt", "xdr", "node_leaf", "optical", 500, 70, sw=(2_000, 25, 2), far=(1_000, 16, 1)),
            _link("xdr-ls-opt", "xdr", "leaf_spine", "optical", 500, 70, sw=(2_000, 25, 2), far=(2_000, 25, 2)),
            _link("xdr-sc-opt", "xdr", "spine_core", "optical", 500, 70, sw=(2_000, 25, 2), far=(2_000, 25, 2)),
            # 800G ports split 1:2: a twin-port module at the switch serves 2 × 400G links.
            _link("eth-nl-split", "800gbe", "node_leaf", "optical", 50, 40, sw=(900, 14, 2), far=(500, 7, 1), breakout=2),
            _link("eth-ls-split", "800gbe", "leaf_spine", "optical", 100, 50, sw=(900, 14, 2), far=(900, 14, 2), breakout=2),
            _link("eth-sc-split", "800gbe", "spine_core", "optical", 500, 60, sw=(1_000, 15, 2), far=(1_000, 15, 2), breakout=2),
        ],
        "racks": [{"id": "rack-42u", "name": "42U rack", "usable_kw": rack_kw, "usable_ru": 42,
                   "unit_price_usd": 5_000, **SRC}],
        "facility": {"pue": 1.25, "usd_per_kwh": 0.10, "compute_rack": "rack-42u", "network_rack": "rack-42u",
                     "link_distance_m": {"node_leaf": node_leaf_m, "leaf_spine": 30, "spine_core": 60},
                     "source": "test"},
    })


def make_scenario(**extra) -> Scenario:
    return Scenario.model_validate({
        "name": "t",
        "workload": {"model": {"layers": 2, "hidden_size": 64, "ffn_hidden_size": 256, "attention_heads": 4,
                               "vocab_size": 1000, "seq_len": 128}, "global_batch_size": 8},
        "target": {"step_time_s": 1.0},
        **extra,
    })
