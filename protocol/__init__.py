"""The agent protocol: what load agents, the Locust master and the orchestrator say to
each other (typed line, phase spec and command forms, the HDR format), with a version.
Imports nothing of loadtower's other rooms: every room may import it."""
