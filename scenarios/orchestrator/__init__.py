"""The orchestrator: runs a plan\x27s phases across hosts and records everything."""
