"""loadtower: a terminal orchestrator for NoSQL benchmarks with live monitoring."""

__version__ = "0.1.0"
