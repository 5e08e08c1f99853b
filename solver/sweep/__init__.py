"""Sensitivity sweeps (SPEC §9): plan the points, run them (serially, in a process pool or on
Dask), summarise what changes. Reports (terminal table, Sweep sheet, PNG) live in `solver.reports`."""
