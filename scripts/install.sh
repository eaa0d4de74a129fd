#!/usr/bin/env bash
# Installs what loadtower needs on a fresh Debian machine: system packages (Java,
# Maven, sshd, Prometheus, node_exporter, tmux), a Python venv with loadtower and
# its dev dependencies (.venv), and the Cassandra 5.0.6 jars (cached in
# ~/.cache/loadtower). Idempotent: skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

need=()
command -v java >/dev/null || need+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || need+=(maven)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v prometheus >/dev/null || need+=(prometheus)
command -v prometheus-node-exporter >/dev/null || need+=(prometheus-node-exporter)
command -v tmux >/dev/null || need+=(tmux)
command -v ip >/dev/null || need+=(iproute2)
if [ "${#need[@]}" -gt 0 ]; then
  echo "install: apt packages: ${need[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e ".[dev]"
.venv/bin/python -m loadtower.store.hdr_kernels  # compile the store's loops once (numba cache)
.venv/bin/python -m loadtower.agents.cql.native_sender  # and the agents' native senders
.venv/bin/python -m loadtower.agents.cql.wire_sender

.venv/bin/loadtower sandbox fetch
echo "install: done"
