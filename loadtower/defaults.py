"""Default paths shared by the commands."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

STORE_ENV = "LOADTOWER_STORE"


def cache_dir() -> Path:
    """Where downloaded artefacts (an engine's server jars, ...) are cached: ~/.cache/loadtower."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "loadtower"


def default_store_path() -> Path:
    """$LOADTOWER_STORE, else ./loadtower.duckdb."""
    return Path(os.environ.get(STORE_ENV, "loadtower.duckdb"))


def default_sandbox_dir() -> Path:
    """$LOADTOWER_SANDBOX, else ./.sandbox."""
    return Path(os.environ.get("LOADTOWER_SANDBOX", ".sandbox"))


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        type=Path,
        default=None,
        help=f"DuckDB store file (default: ${STORE_ENV} or ./loadtower.duckdb)",
    )


def add_force_argument(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--force", action="store_true", help=help)


def store_path(args: argparse.Namespace) -> Path:
    return args.store if getattr(args, "store", None) else default_store_path()
