"""Inputs: typed catalog and scenario models, loaded from YAML with file:line:col errors."""
from .catalog import CatalogProvenance, default_catalog_path, load_catalog, provenance
from .scenario import LoadedScenario, check_against_catalog, load_scenario
from .yaml_safe import Document, read_yaml

__all__ = ["CatalogProvenance", "Document", "LoadedScenario", "check_against_catalog", "default_catalog_path",
           "load_catalog", "load_scenario", "provenance", "read_yaml"]
