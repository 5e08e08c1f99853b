"""Named model presets and shapes from a parameter count: what `workload.model` may say instead of the shape.

- `model: llama3.1-405b` (or `{preset: llama3.1-405b, seq_len: 4096}`, fields given beside the name win): the
  shipped file `solver/inputs/models/<name>.yaml`, whose values are the model's published config.json, each
  file naming its source (docs/sources.md [H1]–[H12]).
- `model: {params: 400e9}`: a dense shape of about that many parameters, built the way the Llama 3 family is
  (docs/model.md "Model presets and shapes from a parameter count"): h/L ≈ 128 (Llama 3 8B: 4096/32 = 128,
  405B: 16384/126 = 130), d_h = 128, 8 KV heads, f = 3.25·h (405B: 53248 = 3.25·16384), the Llama 3 vocabulary
  and an 8,192-token sequence. The result states what it assumed (`TransformerShape.origin`), and every
  output prints it.

`load_model_preset(name)` is the public entry (other workloads, e.g. serving, reuse it); `expand_model` turns
whatever a scenario gave into the dict of a `TransformerShape`.
"""
from __future__ import annotations

import difflib
import math
from functools import cache
from pathlib import Path
from typing import Any

import yaml

MODELS_DIR = Path(__file__).resolve().parent / "models"

# the Llama 3 recipe a parameter count expands by (docs/sources.md [H1]-[H3])
ASPECT_RATIO = 128.0      # h / L
HEAD_DIM = 128
KV_HEADS = 8
FFN_RATIO = 3.25          # f / h, rounded to a multiple of 256
VOCAB = 128256
SEQ_LEN = 8192
DEFAULT_TOKENS_PER_STEP = 16 * 1024 * 1024
"""Tokens per step assumed when a preset or a parameter count leaves out global_batch_size: Llama 3 405B's
final 16M-token batch (Llama 3 paper §3.4.1, docs/sources.md [H3])."""


class PresetError(ValueError):
    """An unknown preset name or a bad `params` expansion (a ValueError: pydantic reports it at the field)."""


@cache
def _presets() -> dict[str, dict[str, Any]]:
    """Every shipped preset by name and alias (read once)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(MODELS_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for key in [data["name"], *(data.get("aliases") or [])]:
            out[str(key).lower()] = data
    return out


def preset_names() -> list[str]:
    """The shipped presets' names (aliases left out), sorted."""
    return sorted({d["name"] for d in _presets().values()})


def load_model_preset(name: str) -> dict[str, Any]:
    """The shape of the named preset as `TransformerShape` fields, with `origin` naming its source.

    Raises PresetError (a ValueError) naming the nearest presets when `name` is unknown."""
    found = _presets().get(str(name).strip().lower())
    if found is None:
        close = difflib.get_close_matches(str(name).lower(), list(_presets()), n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
        raise PresetError(f"unknown model preset {name!r}: {hint}shipped presets: {', '.join(preset_names())} "
                          "(or give the shape's fields, or {params: <count>})")
    shape = dict(found["model"])
    shape["origin"] = f"preset {found['name']}: {found['source']}"
    return shape


def _per_layer(h: int, f: int) -> float:
    """GEMM weights and norms of one Llama-3-like layer: h·(h + 2·h_kv) + h² + 3·h·f + 2·h (perf/model.py)."""
    return h * (h + 2 * KV_HEADS * HEAD_DIM) + h * h + 3 * h * f + 2 * h


def _ffn(h: int) -> int:
    return int(round(FFN_RATIO * h / 256)) * 256


def dense_shape_for(params: float) -> dict[str, Any]:
    """A dense Llama-3-like shape of about `params` parameters: the h (a multiple of 1,024, so 8 KV heads of
    128 divide it) whose whole number of layers L = round((P − 2hV) / P_layer) lands nearest h/L = 128."""
    if not math.isfinite(params) or params < 1e8 or params > 1e14:
        raise PresetError(f"params {params:g} is outside 1e8 … 1e14 parameters")
    best: tuple[float, int, int] | None = None
    for k in range(1, 129):
        h = 1024 * k
        layers = round((params - 2 * h * VOCAB) / _per_layer(h, _ffn(h)))
        if layers < 1:
            continue
        score = abs(math.log(h / layers / ASPECT_RATIO))
        if best is None or score < best[0]:
            best = (score, h, layers)
    if best is None:
        raise PresetError(f"params {params:g} is too small for a Llama-3-like shape with its 128,256-token vocabulary")
    _, h, layers = best
    f = _ffn(h)
    total = layers * _per_layer(h, f) + h + 2 * h * VOCAB
    return {"layers": layers, "hidden_size": h, "ffn_hidden_size": f, "ffn_type": "swiglu",
            "attention_heads": h // HEAD_DIM, "kv_heads": KV_HEADS, "vocab_size": VOCAB, "seq_len": SEQ_LEN,
            "tied_embeddings": False,
            "origin": (f"params {params / 1e9:,.4g}B → a dense Llama-3-like shape of {total / 1e9:,.1f}B parameters: "
                       f"{layers} layers, hidden {h}, ffn {f} (3.25·h), {h // HEAD_DIM} heads of {HEAD_DIM}, "
                       f"{KV_HEADS} KV heads, vocabulary {VOCAB}, sequence {SEQ_LEN} (h/L = {h / layers:.0f}, "
                       "as Llama 3 8B and 405B; docs/sources.md [H1]-[H3])")}


def expand_model(value: Any) -> Any:
    """A scenario's `model` as `TransformerShape` fields: a preset name, `{preset: name, …overrides}`,
    `{params: count, …overrides}`, or the shape itself (returned unchanged)."""
    if isinstance(value, str):
        return load_model_preset(value)
    if not isinstance(value, dict) or ("preset" not in value and "params" not in value):
        return value
    if "preset" in value and "params" in value:
        raise PresetError("give preset or params, not both")
    rest = {k: v for k, v in value.items() if k not in ("preset", "params")}
    if "preset" in value:
        base = load_model_preset(value["preset"])
    else:
        base = dense_shape_for(_count(value["params"]))
    if rest:
        base["origin"] = f"{base['origin']}; given: {', '.join(sorted(rest))}"
    return {**base, **rest}


def _count(params: Any) -> float:
    """`params` as a number: 400e9 (YAML 1.1 readers other than the solver's give "400e9" as text; it is read
    like pydantic reads any number field outside the solver's strict file reading)."""
    if isinstance(params, bool):
        raise PresetError(f"params must be a number of parameters, e.g. 400e9 (got {params!r})")
    try:
        return float(params)
    except (TypeError, ValueError):
        raise PresetError(f"params must be a number of parameters, e.g. 400e9 (got {params!r})") from None


def default_batch(model: dict[str, Any]) -> tuple[int, str]:
    """global_batch_size when a preset or parameter count leaves it out: 16M tokens per step in whole sequences
    (at least one), with the sentence that says so."""
    seq = int(model.get("seq_len") or SEQ_LEN)
    batch = max(1, round(DEFAULT_TOKENS_PER_STEP / seq))
    return batch, (f"global_batch_size {batch} sequences ({batch * seq:,} tokens per step, Llama 3 405B's "
                   "final 16M-token batch; docs/sources.md [H3]): give workload.global_batch_size to change it")
