"""Published serving model shapes (config.json of each model card, docs/sources.md [S14]; the table lives in
solver/calibration/serving_models.py) and a context builder shared by the serving tests."""
from __future__ import annotations

from solver.calibration.serving_models import SERVING_MODELS, serving_shape
from solver.inputs.catalog import load_catalog
from solver.inputs.schema import TransformerShape
from solver.perf.serving import ServingModelContext

MODELS = SERVING_MODELS
_CATALOG = None


def catalog():
    global _CATALOG
    if _CATALOG is None:
        _CATALOG = load_catalog()
    return _CATALOG


def shape(name: str) -> TransformerShape:
    return serving_shape(name)


def context(model: str, platform: str, stack: str = "trtllm", precision: str = "fp8", kv: str | None = None,
            scaleout_gbyte_s: float = 50.0, cat=None) -> ServingModelContext:
    cat = cat or catalog()
    p = cat.by_id("platforms")[platform]
    return ServingModelContext(model=shape(model), gpu=cat.by_id("gpus")[p.gpu], platform=p,
                               scaleout_gbyte_s_per_gpu=scaleout_gbyte_s, stack=cat.by_id("stacks")[stack],
                               precision=precision, kv_cache_dtype=kv or ("bf16" if precision == "bf16" else "fp8"))
