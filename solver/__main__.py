"""`python -m solver` runs the fabricplan command line."""
import sys

from .cli import main

sys.exit(main())
