"""The package's version (tests/test_cli.py checks it equals pyproject.toml's): a foundation module, so the
reports name it without importing the package's lazy API facade (solver/__init__.py)."""
__version__ = "0.1.0"
