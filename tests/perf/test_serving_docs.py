"""docs/model.md's "Serving replica" and "Serving calibration" sections and the serving code stay in step: every
public function of the serving modules is named there, and every code name the sections cite exists."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULES = [ROOT / "solver" / "perf" / f"{m}.py" for m in ("serving", "serving_model", "serving_step", "serving_queue",
                                                                     "serving_coverage")]
CALIBRATION = [ROOT / "solver" / "calibration" / f"{m}.py" for m in ("serving_fit", "serving_report")]


def section() -> str:
    text = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    start = text.index("## Serving replica (solver/perf/serving*.py")
    end = text.index("#### Stack `trtllm`", start)
    return text[start:end]


def public_names(paths) -> set[str]:
    names = set()
    for path in paths:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name) and t.id.isupper()}
    return names


def test_every_public_function_of_the_replica_model_is_documented():
    doc = section()
    functions = {n for n in public_names(MODULES) if n[0].islower()}
    missing = sorted(n for n in functions if not re.search(rf"\b{n}\b", doc))
    assert not missing, f"docs/model.md Serving does not name: {missing}"


def test_every_cited_code_name_exists():
    doc = section()
    cited = set(re.findall(r"`(?:serving(?:_model|_step|_queue|_report)?\.)?([a-z_]+[a-z0-9_]*)(?:\([^`]*\))?(?: ->[^`]*)?`",
                           doc))
    known = public_names(MODULES + CALIBRATION) | {"RUN_FILES"}
    functionish = {c for c in cited if "_" in c and c.islower()}
    fields = {"active_matmul", "kv_cache_gb_per_gpu", "max_batch_size", "prefix_cache_hit", "kv_transfer_s",
              "kv_transfer_gbyte_per_request", "scaleout_gbyte_s_per_gpu", "gpus_per_domain", "nvlink_gbyte_s",
              "alltoall_efficiency", "hbm_reserve_gb", "dense_tflops", "dp_attention", "ep_imbalance",
              "allreduce_efficiency", "serving_stacks", "chunk_tokens", "moe_efficiency"}
    unknown = sorted(c for c in functionish if c not in known and c not in fields
                     and not c.startswith(("tests", "solver", "docs")))
    assert not unknown, f"docs/model.md Serving cites names the code lacks: {unknown}"
