"""Bad inventory and extra-cost input gets the located errors the rest of the input gets (issue 16):
file, line, field and what to do, exit code 2 from the command line, nothing written."""
from __future__ import annotations

import subprocess
import sys

import pytest

import solver
from solver.errors import InputError
from solver.inputs import check_against_catalog

HEAD = """name: inv
workload:
  model: {layers: 2, hidden_size: 64, ffn_hidden_size: 256, attention_heads: 4, vocab_size: 1000, seq_len: 128}
  global_batch_size: 8
target: {step_time_s: 1}
"""


def _problems(tmp_path, body: str, default_catalog) -> list[str]:
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    with pytest.raises(InputError) as err:
        check_against_catalog(solver.load_scenario(path), default_catalog)
    return [str(p).replace(str(path), "s.yaml") for p in err.value.problems]


def test_negative_counts_are_located(tmp_path, default_catalog):
    problems = _problems(tmp_path, "inventory:\n  dgx-h100: -4\n  qm9700: {count: -2}\n", default_catalog)
    assert problems[0].startswith("s.yaml:7:3: inventory.dgx-h100.count: Input should be greater than or equal to 0")
    assert problems[1].startswith("s.yaml:8:12: inventory.qm9700.count:")


def test_unknown_ids_and_bare_gpus_name_what_to_use(tmp_path, default_catalog):
    problems = _problems(tmp_path, "inventory:\n  dgx-h10: 1\n  b200: 8\n", default_catalog)
    assert problems == [
        "s.yaml:7:3: inventory.dgx-h10: no platform, NIC, switch, link or rack with this id in the catalog: "
        "did you mean 'dgx-h100'? (got 'dgx-h10')",
        "s.yaml:8:3: inventory.b200: GPUs are owned as the platforms that carry them (nodes, or NVL72 racks): "
        "use one of dgx-b200, hgx-b200 with the number of nodes (or racks) (got 'b200')"]


def test_owned_parts_that_cannot_work_together(tmp_path, default_catalog):
    """An XDR NIC on an H100 HGX (it takes CX-7 NDR or BF-3 400GbE), a 400G InfiniBand switch for
    that 800G NIC, and Ethernet switch-end links with an InfiniBand switch."""
    body = "inventory:\n  hgx-h100: 4\n  cx8-xdr: 32\n  qm9700: 2\n"
    problems = _problems(tmp_path, body, default_catalog)
    assert any(p.startswith("s.yaml:8:3: inventory.cx8-xdr: the owned NIC fits none of the owned platforms "
                            "(the owned platforms take bf3-400gbe, cx7-ndr)") for p in problems)
    assert any(p.startswith("s.yaml:9:3: inventory.qm9700: the owned switch (infiniband, 400 Gb/s ports) serves no "
                            "owned NIC") for p in problems)
    eth_link = next(link.id for link in default_catalog.links if link.generation != "ndr")
    problems = _problems(tmp_path, f"inventory:\n  qm9700: 2\n  {eth_link}: 10\n", default_catalog)
    assert problems[0].startswith(f"s.yaml:8:3: inventory.{eth_link}: the owned link is")
    assert "remove it, or own a switch of its generation" in problems[0]


def test_nics_with_a_platform_that_includes_them(tmp_path, default_catalog):
    problems = _problems(tmp_path, "inventory:\n  gb200-nvl72: 2\n  cx7-ndr: 8\n", default_catalog)
    assert problems[0].startswith("s.yaml:8:3: inventory.cx7-ndr: the owned NIC fits none of the owned platforms "
                                  "(every owned platform includes its own scale-out NICs)")


def test_compatible_inventory_is_accepted(tmp_path, default_catalog):
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + "inventory:\n  hgx-h100: 64\n  cx7-ndr: 512\n  qm9700: {count: 24, purchase_year: 2024}\n"
                    "  rack-42u: 16\n  dgx-b200: 0\n", encoding="utf-8")
    ls = solver.load_scenario(path)
    check_against_catalog(ls, default_catalog)
    assert ls.scenario.owned_counts() == {"hgx-h100": 64, "cx7-ndr": 512, "qm9700": 24, "rack-42u": 16}


def test_extra_costs_need_exactly_one_rule_and_distinct_names(tmp_path, default_catalog):
    body = ("extra_costs:\n"
            "  - {name: storage, per_node_usd: 20000, per_gpu_usd: 10, price_source: quote, price_date: '2025'}\n"
            "  - {name: support, fraction_of_hardware: 0.08, price_source: quote, price_date: '2025'}\n"
            "  - {name: support, per_gpu_usd: 300, price_source: quote, price_date: '2025'}\n")
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    with pytest.raises(InputError) as err:
        solver.load_scenario(path)
    first = str(err.value.problems[0]).replace(str(path), "s.yaml")
    assert first.startswith("s.yaml:7:5: extra_costs[0]: give exactly one of per_node_usd, per_gpu_usd or "
                            "fraction_of_hardware (got ['per_node_usd', 'per_gpu_usd'])")
    path.write_text(HEAD + body.replace("per_gpu_usd: 10, ", ""), encoding="utf-8")
    with pytest.raises(InputError) as err:
        solver.load_scenario(path)
    problem = str(err.value.problems[0]).replace(str(path), "s.yaml")
    assert problem.startswith("s.yaml:9:6: extra_costs[2].name: extra cost 'support' is already defined at "
                              "extra_costs[1]: give each line its own name")


def test_cli_validate_exits_2_with_the_location(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + "inventory:\n  hgx-h100: 4\n  dgx-h10: 2\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "solver", "validate", str(path)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert run.returncode == 2
    assert f"{path}:8:3: inventory.dgx-h10: no platform" in run.stderr
    assert "Traceback" not in run.stderr
