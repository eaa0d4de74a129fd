"""Workload files: your own tables, statements and bindings (docs/workloads.md)."""
