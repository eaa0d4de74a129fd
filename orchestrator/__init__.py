"""loadtower.orchestrator: runs a plan's phases across hosts and records everything (it
imports scenarios, which import nothing of it; docs/architecture.md)."""
