"""Shared fixtures and paths: the catalogs are loaded once per test session.

Tests are laid out like the package (tests/inputs, tests/perf, tests/fabrics, tests/optimize,
tests/reports, tests/sweep) plus end-to-end tests at the top level; `REPO` and `DATA` are the
repository root and tests/data wherever a test file sits.
"""
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
