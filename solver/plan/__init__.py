"""Multi-period purchase plans (SPEC §6.1): periods, the plan MILP, the ledger that prices a plan,
running it with its comparisons, and the report."""
