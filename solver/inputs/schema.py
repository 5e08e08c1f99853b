"""Typed inputs: the catalog and the scenario (SPEC §3), one import for every model.

The models live by subject and are re-exported here, so importers keep `from .inputs.schema import ...`:

- schema_base.py: `Strict` (the base of every model) and the identifier, date and integer field types;
- catalog_schema.py: GPUs, platforms, NICs, switches, links, racks, the facility and the `Catalog`, with the
  shared field types and registries (TIERS, FABRIC_FAMILIES, PRECISIONS);
- workload_schema.py: the transformer's shape (dense, MoE, MLA, sliding window) and the `Workload`;
- scenario_schema.py: target, constraints, parallelism, overlap, robustness, pins, sweeps, owned hardware, extra
  costs, plans and the `Scenario`;
- stacks.py, nic_configs.py, reliability.py, rentals.py: the software stacks, NIC configurations and site lines,
  failure data and goodput settings, and rental offers the catalog and scenario hold.

Every model forbids unknown keys and carries its unit in each field name. Validation that needs several
entities at once (a platform's GPU exists, a pin is allowed) lives in `loading.py`, where the YAML line of the
offending value is known.
"""
from __future__ import annotations

from .catalog_schema import (
    FABRIC_FAMILIES,
    PRECISIONS,
    TIERS,
    AlltoallEfficiency,
    Catalog,
    ComputeEfficiency,
    ComputeModel,
    FabricFamilyName,
    Facility,
    Fraction,
    Gpu,
    Link,
    LinkDistance,
    Nic,
    NonNegative,
    Platform,
    Positive,
    Priced,
    Rack,
    Switch,
)
from .nic_configs import CapexScope, NicConfigChoice, NicConfiguration, SiteLine
from .reliability import CatalogReliability, ScenarioReliability
from .rentals import Rental
from .scenario_schema import (
    CAPS,
    PRICE_CATEGORIES,
    Constraints,
    EfficiencyOverrides,
    ExtraCost,
    FloatChoice,
    IdChoice,
    IntChoice,
    NamedModel,
    Overlap,
    OwnedPart,
    Parallelism,
    Pin,
    Plan,
    PlanGrowth,
    PlanPeriod,
    PriceCategory,
    Ratio,
    Robustness,
    Scenario,
    Sweep,
    SweepGrowth,
    SweepParameter,
    SweepRange,
    Target,
    Tco,
    Year,
    as_list,
)
from .schema_base import Date, Identifier, PosInt, Strict
from .stacks import DEFAULT_STACK, Stack
from .workload_schema import (
    ExpertDispatch,
    MlaShape,
    MoeShape,
    RecomputeModule,
    SlidingWindow,
    TransformerShape,
    Workload,
)

__all__ = [
    "CAPS", "DEFAULT_STACK", "FABRIC_FAMILIES", "PRECISIONS", "PRICE_CATEGORIES", "TIERS", "AlltoallEfficiency",
    "CapexScope", "Catalog", "CatalogReliability", "ComputeEfficiency", "ComputeModel", "Constraints", "Date",
    "EfficiencyOverrides", "ExpertDispatch", "ExtraCost", "FabricFamilyName", "Facility", "FloatChoice", "Fraction",
    "Gpu", "IdChoice", "Identifier", "IntChoice", "Link", "LinkDistance", "MlaShape", "MoeShape", "NamedModel", "Nic",
    "NicConfigChoice", "NicConfiguration", "NonNegative", "Overlap", "OwnedPart", "Parallelism", "Pin", "Plan",
    "PlanGrowth", "PlanPeriod", "Platform", "PosInt", "Positive", "PriceCategory", "Priced", "Rack", "Ratio",
    "RecomputeModule", "Rental", "Robustness", "Scenario", "ScenarioReliability", "SiteLine", "SlidingWindow", "Stack",
    "Strict", "Sweep", "Switch", "SweepGrowth", "SweepParameter", "SweepRange", "Target", "Tco", "TransformerShape", "Workload",
    "Year", "as_list",
]
