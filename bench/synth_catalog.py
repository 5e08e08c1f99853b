"""Write a synthetic catalog with four times the platforms and NICs of the default one.

The overlay holds three copies of every shipped platform and NIC under new ids (`<id>-s1` … `-s3`),
each price multiplied by a seeded random factor in [0.9, 1.1]. Copy i of a platform is compatible
with copy i of its NICs, so each copy brings as many architectures as its original: the design space
grows four-fold while every copy stays a real, sourced part. Loaded as `[default, overlay]`.

    python bench/synth_catalog.py OUT_DIR      # prints the overlay's path
"""
from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CATALOG = ROOT / "catalogs" / "default.yaml"
COPIES = 3  # plus the original: four times the platforms and NICs
PRICE_SPREAD = 0.10  # ± 10 %
SEED = 8  # issue 8


def _copy(entry: dict, suffix: str, rng: random.Random) -> dict:
    """A copy of a catalog entry under a new id with its unit price perturbed by ± PRICE_SPREAD."""
    out = dict(entry)
    out["id"] = f"{entry['id']}{suffix}"
    out["name"] = f"{entry.get('name', entry['id'])} (synthetic copy{suffix})"
    factor = 1.0 + rng.uniform(-PRICE_SPREAD, PRICE_SPREAD)
    out["unit_price_usd"] = round(entry["unit_price_usd"] * factor, 2)
    out["price_source"] = f"synthetic: {factor:.4f} × the price of {entry['id']} (bench/synth_catalog.py)"
    out["price_is_estimate"] = True
    return out


def synthetic_overlay(default_path: Path = DEFAULT_CATALOG, copies: int = COPIES, seed: int = SEED) -> dict:
    """The overlay catalog document: `copies` renamed copies of every platform and NIC."""
    base = yaml.safe_load(default_path.read_text())
    rng = random.Random(seed)
    platforms, nics = [], []
    for i in range(1, copies + 1):
        suffix = f"-s{i}"
        nics += [_copy(n, suffix, rng) for n in base["nics"]]
        for p in base["platforms"]:
            plat = _copy(p, suffix, rng)
            plat["compatible_nics"] = [f"{n}{suffix}" for n in p["compatible_nics"]]
            platforms.append(plat)
    return {"name": "synthetic-4x", "description": "bench: 3 perturbed copies of every platform and NIC",
            "platforms": platforms, "nics": nics}


def write_overlay(out_dir: str | Path, copies: int = COPIES) -> Path:
    """Write the overlay to OUT_DIR/synthetic-4x.yaml (with `copies` other than 3:
    synthetic-<copies + 1>x.yaml) and return its path."""
    path = Path(out_dir) / f"synthetic-{copies + 1}x.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(synthetic_overlay(copies=copies), sort_keys=False, allow_unicode=True))
    return path


if __name__ == "__main__":
    print(write_overlay(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="fabricplan-bench-")))
