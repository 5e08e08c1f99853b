"""Shared fixtures: the catalogs are loaded once per test session."""
from pathlib import Path

import pytest

import solver

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def default_catalog():
    return solver.load_catalog()


@pytest.fixture(scope="session")
def toy_catalog():
    return solver.load_catalog([DATA / "toy-catalog.yaml"])
