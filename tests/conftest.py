"""Shared fixtures and paths: the catalogs are loaded once per test session.

Tests are laid out like the package (tests/inputs, tests/perf, tests/fabrics, tests/optimize,
tests/reports, tests/sweep) plus end-to-end tests at the top level; `REPO` and `DATA` are the
repository root and tests/data wherever a test file sits.
"""
import copy
from pathlib import Path

import pytest

import solver

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def default_catalog():
    return solver.load_catalog()


@pytest.fixture(scope="session")
def toy_catalog():
    return solver.load_catalog([DATA / "toy-catalog.yaml"])


# The exhaustive enumeration is the tests' most expensive oracle and several files check the same small
# spaces against it (test_optimizer and test_frontier share four). It is a pure function of the scenario's
# content (its name only labels outputs) and the catalog, so each distinct (scenario, catalog, target) is
# enumerated once per session. The catalog object is kept in the entry, so a key can never be matched by
# another catalog that happens to reuse a freed id.
_ENUMERATED: dict = {}


def enumerated_designs(scenario, catalog, target_step_time_s: float | None = None) -> list:
    """oracle.enumerate_designs, memoised for the session; a fresh list (the designs are not mutated)."""
    from solver.optimize import oracle

    key = (id(catalog), scenario.model_dump_json(exclude={"name"}), target_step_time_s)
    hit = _ENUMERATED.get(key)
    if hit is None or hit[0] is not catalog:
        hit = _ENUMERATED[key] = (catalog, oracle.enumerate_designs(scenario, catalog, target_step_time_s))
    return list(hit[1])


def enumerated_spaces(spaces: dict, catalog) -> dict:
    """Each named scenario document of `spaces` enumerated (`enumerated_designs`): {name: designs}."""
    return {name: enumerated_designs(load_doc(doc).scenario, catalog) for name, doc in spaces.items()}


def load_doc(doc: dict):
    """solver.load_scenario of a scenario document written in a test (a copy: the document is not changed)."""
    return solver.load_scenario(copy.deepcopy(doc))


# GPT-3 1.3B and 6.7B (Brown et al. 2020, Table 2.1): L, h, heads; f = 4h; V = 51200 padded.
GPT3_1_3B = dict(layers=24, hidden_size=2048, ffn_hidden_size=8192, ffn_type="gelu", attention_heads=16,
                 vocab_size=51200, seq_len=2048)
GPT3_6_7B = dict(layers=32, hidden_size=4096, ffn_hidden_size=16384, ffn_type="gelu", attention_heads=32,
                 vocab_size=51200, seq_len=2048)
# GPT-3 175B (Brown et al. 2020, Table 2.1): 96 layers, h = 12,288, 96 heads; f = 4h; GPT-2's 50,257-token
# vocabulary, tied embeddings.
GPT3_175B = dict(layers=96, hidden_size=12288, ffn_hidden_size=4 * 12288, ffn_type="gelu", attention_heads=96,
                 vocab_size=50257, seq_len=2048, tied_embeddings=True)
