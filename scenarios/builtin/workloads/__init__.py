"""The built-in workload files (docs/workloads.md)."""
