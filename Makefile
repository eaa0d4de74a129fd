# loadtower: `make demo` (sandbox + quick-start scenario + live TUI), `make test`.
VENV ?= .venv
LT := $(VENV)/bin/loadtower
SANDBOX ?= .sandbox
NODES ?= 1

.PHONY: install demo test lint unit integration sandbox-up sandbox-down bench-peers clean

install:
	bash scripts/install.sh

demo: install
	$(LT) demo --dir $(SANDBOX) --cassandra-nodes $(NODES)

test: lint
	$(VENV)/bin/pytest -m "not integration" -q
	$(VENV)/bin/pytest -m integration -q

lint:
	$(VENV)/bin/ruff check .

unit:
	$(VENV)/bin/pytest -m "not integration" -q

integration:
	$(VENV)/bin/pytest -m integration -q

sandbox-up:
	$(LT) sandbox up --dir $(SANDBOX) --cassandra-nodes $(NODES)

sandbox-down:
	$(LT) sandbox down --dir $(SANDBOX)

bench-peers:
	command -v latte >/dev/null || cargo install latte-cli

clean: sandbox-down
	rm -rf $(SANDBOX)
