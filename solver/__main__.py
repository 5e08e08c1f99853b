"""`python -m solver` runs the fabricplan command line."""
from .entry import run

run()
