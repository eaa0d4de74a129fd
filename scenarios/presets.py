"""Workload presets: the YCSB core workloads A-F, experiment 1's recipes mix, TTL reads."""

from __future__ import annotations

OPS = (
    "read",
    "update",
    "insert",
    "scan",
    "read_modify_write",
    "insert_batch",
    "delete",
    "delete_batch",
)
DISTRIBUTIONS = ("uniform", "zipfian", "latest", "hotspot")

# preset -> (mix weights, key distribution); the YCSB mixes are the core workloads' own.
PRESETS: dict[str, tuple[dict[str, float], str]] = {
    "ycsb-a": ({"read": 50, "update": 50}, "zipfian"),
    "ycsb-b": ({"read": 95, "update": 5}, "zipfian"),
    "ycsb-c": ({"read": 100}, "zipfian"),
    "ycsb-d": ({"read": 95, "insert": 5}, "latest"),
    "ycsb-e": ({"scan": 95, "insert": 5}, "zipfian"),
    "ycsb-f": ({"read": 50, "read_modify_write": 50}, "zipfian"),
    "recipes": (
        {"read": 60, "insert": 10, "insert_batch": 10, "delete": 10, "delete_batch": 10},
        "uniform",
    ),
    "ttl": ({"read": 100}, "uniform"),
    "custom": ({}, "uniform"),
}

# preset -> the schema family the agent creates
SCHEMAS: dict[str, str] = {
    "ycsb-a": "ycsb",
    "ycsb-b": "ycsb",
    "ycsb-c": "ycsb",
    "ycsb-d": "ycsb",
    "ycsb-e": "ycsb",
    "ycsb-f": "ycsb",
    "recipes": "recipes",
    "ttl": "ttl",
    "custom": "ycsb",
}
