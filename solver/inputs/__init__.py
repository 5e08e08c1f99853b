"""Inputs: typed catalog and scenario models, loaded from YAML with file:line:col errors."""
from .catalog import CatalogProvenance, default_catalog_path, layered_paths, load_catalog, provenance
from .scenario import LoadedScenario, check_against_catalog, load_scenario
from .schema import Catalog
from .yaml_safe import Document, read_yaml

__all__ = ["CatalogProvenance", "Document", "LoadedScenario", "as_loaded", "catalog_for", "check_against_catalog",
           "default_catalog_path", "layered_paths", "load_catalog", "load_scenario", "provenance", "read_yaml"]


def catalog_for(scenario: LoadedScenario, base_paths: list | None = None, default: bool = True) -> Catalog:
    """The catalog a scenario runs on: the shipped default (unless `default` is false), the extra
    `base_paths` layered over it, then the scenario's own `catalog:` list (SPEC §8.1)."""
    return load_catalog(layered_paths(base_paths, default) + list(scenario.catalog_paths))


def as_loaded(scenario) -> LoadedScenario:
    """A LoadedScenario from a LoadedScenario, a YAML path or a dict."""
    return scenario if isinstance(scenario, LoadedScenario) else load_scenario(scenario)
