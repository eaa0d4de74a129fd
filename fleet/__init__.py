"""loadtower.fleet: the hosts a run drives, beside the orchestrator's run: SSH to each host
(the pool, its keys), the agents' packaging (the wheel, the wheelhouse, the Rust core's
wheel, the installed version) and their secrets, the data sets uploaded to them, node
metrics read over SSH, the host facts and versions recorded, and the cleanup of what a
run left on them. It imports nothing of the orchestrator (the orchestrator uses it;
docs/architecture.md)."""
