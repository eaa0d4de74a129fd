# loadtower: `make demo` (sandbox + quick-start scenario + live TUI), `make test`.
# Every target that needs the venv depends on $(STAMP): scripts/install.sh runs on a
# fresh clone and again only when pyproject.toml, setup.py, the install sets
# (loadtower/install_sets.py, the dependency lists setup.py reads), the scripts or the
# Rust load core's sources (engines/cassandra/native, built by scripts/build_core.sh) change.
VENV ?= .venv
LT := $(VENV)/bin/loadtower
STAMP := $(VENV)/.installed
SANDBOX ?= .sandbox
NODES ?= 1

.PHONY: install agent-wheel demo test lint unit integration sandbox-up sandbox-down sandbox-up-cluster sandbox-down-cluster bench-peers clean

CORE_SOURCES := $(wildcard engines/cassandra/native/Cargo.* engines/cassandra/native/src/*.rs)

$(STAMP): pyproject.toml setup.py loadtower/install_sets.py scripts/install.sh scripts/build_core.sh $(CORE_SOURCES)
	bash scripts/install.sh
	touch $@

install: $(STAMP)

# The agent install set as a wheel (dist/loadtower_agent-*.whl), for a load host:
# pip install dist/loadtower_agent-*.whl (or let `loadtower run --bootstrap-agents` do it).
agent-wheel: $(STAMP)
	$(VENV)/bin/python -m loadtower.fleet.agent_wheel dist

demo: $(STAMP)
	$(LT) demo --dir $(SANDBOX) --cassandra-nodes $(NODES)

test: $(STAMP)  # lint, unit, integration, each timed (scripts/test_parts.sh)
	VENV=$(VENV) bash scripts/test_parts.sh

# The contracts: ruff; import-linter (.importlinter: which room may import which, see
# docs/architecture.md); mypy (pyproject.toml: the whole product, strict for protocol
# and store). Run from the repository root: loadtower/<room> links to the rooms.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# Each half alone, as `make test` runs it (scripts/test_parts.sh): the unit half on
# pytest-xdist (tests/tui after it, in one process); the integration half on 2 workers
# (tests marked `alone` with no other beside them), in one process with INTEGRATION_WORKERS=0
XDIST := --dist loadgroup --no-loadscope-reorder
unit: $(STAMP)
	$(VENV)/bin/pytest -m "not integration" -q -n $${UNIT_WORKERS:-2} $(XDIST) --ignore=tests/tui
	$(VENV)/bin/pytest -m "not integration" -q tests/tui

integration: $(STAMP)
	$(VENV)/bin/pytest -m integration -q $$( [ "$${INTEGRATION_WORKERS:-2}" -gt 0 ] && echo "-n $${INTEGRATION_WORKERS:-2} $(XDIST)" )

sandbox-up: $(STAMP)
	$(LT) sandbox up --dir $(SANDBOX) --cassandra-nodes $(NODES)

sandbox-down:
	$(LT) sandbox down --dir $(SANDBOX)

CLUSTER ?= .cluster
sandbox-up-cluster: $(STAMP)  # root: network namespaces, a user, sudo rules (docs/cluster-sandbox.md)
	$(LT) sandbox up --cluster --dir $(CLUSTER)

sandbox-down-cluster:
	$(LT) sandbox down --cluster --dir $(CLUSTER)

bench-peers:
	command -v latte >/dev/null || cargo install latte-cli

clean: sandbox-down
	rm -rf $(SANDBOX)
