"""`python -m solver` runs the fabricplan command line."""
from .cli import run

run()
