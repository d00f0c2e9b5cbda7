"""browserq's benchmarks: `python -m bench` runs them all (see README, Performance)."""
