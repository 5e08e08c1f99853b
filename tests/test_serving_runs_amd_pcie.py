"""The AMD/PCIe serving measurements (issue 46, tests/data/serving-runs-amd-pcie.csv) keep the columns of
tests/data/serving-runs.csv (the serving fit reads both files), cite docs/sources.md, name catalog GPUs on their platforms,
and carry the published numbers (two rows re-derived by hand from their sources)."""
from __future__ import annotations

import csv
import re

import pytest
from conftest import DATA, REPO

COLUMNS = ("source,stack,gpu,platform,model,precision,tp,pp,ep,concurrency,input_tokens,output_tokens,"
           "measured_output_tokens_per_s_per_gpu,measured_tokens_per_s_per_user,measured_ttft_s,split,note").split(",")
ROWS = list(csv.DictReader(open(DATA / "serving-runs-amd-pcie.csv", encoding="utf-8")))


def test_contract_columns_and_splits():
    with open(DATA / "serving-runs-amd-pcie.csv", encoding="utf-8") as f:
        assert next(csv.reader(f)) == COLUMNS
    assert {r["split"] for r in ROWS} == {"fit", "heldout"}
    held = sum(r["split"] == "heldout" for r in ROWS) / len(ROWS)
    assert 0.25 <= held <= 0.40  # a held-out part of its own, reported apart


def test_sources_gpus_and_platforms_exist(default_catalog):
    sources = (REPO / "docs" / "sources.md").read_text(encoding="utf-8")
    plats, gpus = default_catalog.by_id("platforms"), default_catalog.by_id("gpus")
    for r in ROWS:
        assert re.search(rf"^- \*\*\[{r['source']}\]\*\*", sources, re.MULTILINE), r["source"]
        assert r["gpu"] in gpus and plats[r["platform"]].gpu == r["gpu"]
        assert float(r["measured_output_tokens_per_s_per_gpu"]) > 0 and r["stack"] in ("vllm", "trtllm", "sglang")


def _row(source, gpu, concurrency, output_tokens):
    return next(r for r in ROWS if (r["source"], r["gpu"], r["concurrency"], r["output_tokens"])
                == (source, gpu, str(concurrency), str(output_tokens)))


def test_oci_batch_one_row_by_hand():
    # [P14]: batch 1, 36 output tokens/s over 8 MI300X → 4.5 per GPU, 36 per user
    r = _row("P14", "mi300x", 1, 128)
    assert (float(r["measured_output_tokens_per_s_per_gpu"]), float(r["measured_tokens_per_s_per_user"])) == (4.5, 36.0)


def test_amd_latency_row_by_hand():
    # [P13] 2025-10-06: batch 4, 2,048 output tokens in 18.487 s → 110.78 tokens/s per user, 4 · 110.78 / 8 per GPU
    r = next(x for x in ROWS if x["source"] == "P13" and "2025-10-06" in x["note"] and x["concurrency"] == "4")
    assert float(r["measured_tokens_per_s_per_user"]) == pytest.approx(2048 / 18.487, abs=1e-3)
    assert float(r["measured_output_tokens_per_s_per_gpu"]) == pytest.approx(4 * 2048 / 18.487 / 8, abs=1e-3)
