"""FerretDB: the sandbox's MongoDB-protocol server, built once from the Go module proxy.

No MongoDB server installs on these machines; FerretDB does. ``build()`` runs its
recipe with the machine's Go toolchain in a scratch directory:

1. ``go mod init`` a scratch module and ``go get -tool
   github.com/FerretDB/FerretDB/cmd/ferretdb@VERSION`` (source and dependencies come
   from the Go module proxy into GOMODCACHE);
2. copy the FerretDB module's source out of GOMODCACHE (read-only there) and write
   VERSION into ``build/version/version.txt`` (without it the binary panics at start);
3. ``go build -o ferretdb ./cmd/ferretdb``;

then moves the binary atomically to ``~/.cache/loadtower/ferretdb-VERSION/ferretdb``
(the cache root of the Cassandra jars). A binary there counts as built.

The server runs with the SQLite backend: FerretDB's data are then plain files in the
sandbox directory, with no PostgreSQL server to install, configure and stop beside it.
Authentication is FerretDB's "new auth" (``--test-enable-new-auth``): users live in
FerretDB's own ``admin.system.users``, the first one is created at start-up from
``--setup-username`` / FERRETDB_SETUP_PASSWORD, clients log in with SCRAM-SHA-256 (or
SCRAM-SHA-1), a wrong password is refused (code 18, AuthenticationFailed) and an
unauthenticated command is refused (code 13, Unauthorized).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from loadtower.defaults import cache_dir
from loadtower.errors import LoadtowerError
from loadtower.sandbox.bounded_run import run_bounded

FERRETDB_VERSION = "v1.24.2"
MODULE = "github.com/FerretDB/FerretDB"
TOOL = f"{MODULE}/cmd/ferretdb"
# a cold build downloads ~150 modules and compiles ~40 s of Go on 2 cores: 15 minutes
# means stuck (a proxy that does not answer)
BUILD_TIMEOUT_S = 900.0
# `go get -tool` needs Go 1.24; from Go 1.21 on, go fetches a newer toolchain itself
# (GOTOOLCHAIN=auto, from the module proxy), so 1.21 is the oldest that can build it
MIN_GO = (1, 21)
GO_FALLBACK = Path("/usr/local/go/bin/go")  # where go.dev's tarball puts it
GO_INSTALL_HINT = (
    "install Go 1.24 or newer (https://go.dev/dl/, or apt-get install golang-go where "
    "it is 1.24 or newer) and put `go` on PATH"
)
PROXY_TROUBLE = (
    "dial tcp",
    "i/o timeout",
    "no such host",
    "connection refused",
    "TLS handshake timeout",
    "proxyconnect",
    "network is unreachable",
)


def binary_path(version: str = FERRETDB_VERSION) -> Path:
    return cache_dir() / f"ferretdb-{version}" / "ferretdb"


def available(version: str = FERRETDB_VERSION) -> bool:
    """True when the FerretDB binary is built and cached."""
    return os.access(binary_path(version), os.X_OK)


def find_go() -> str | None:
    """The `go` command: on PATH, else the official tarball's /usr/local/go/bin/go."""
    found = shutil.which("go")
    if found:
        return found
    return str(GO_FALLBACK) if os.access(GO_FALLBACK, os.X_OK) else None


def go_version(go: str) -> tuple[int, int] | None:
    """(major, minor) of `go env GOVERSION` ("go1.26.8"), None when it does not say."""
    try:
        out = subprocess.run(
            [go, "env", "GOVERSION"], capture_output=True, text=True, timeout=30, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = out.removeprefix("go").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def usable_go(version: str = FERRETDB_VERSION) -> tuple[str | None, str]:
    """(the go command, "") when one here can build FerretDB, else (None, why not)."""
    go = find_go()
    if go is None:
        return None, f"no `go` on PATH: FerretDB {version} is built with Go; {GO_INSTALL_HINT}"
    have = go_version(go)
    if have is None or have < MIN_GO:
        found = f"{have[0]}.{have[1]}" if have else "unknown"
        return None, f"{go} is Go {found}, too old to build FerretDB {version}; {GO_INSTALL_HINT}"
    return go, ""


@dataclass(frozen=True)
class Step:
    """One command of the recipe: what it does (for errors), its argv and directory."""

    what: str
    argv: list[str]
    cwd: Path


def fetch_steps(go: str, scratch: Path, version: str = FERRETDB_VERSION) -> list[Step]:
    """The scratch module: init, fetch the tool at ``version``, print its module's source dir."""
    mod = scratch / "mod"
    return [
        Step("go mod init", [go, "mod", "init", "loadtower.local/ferretdb-build"], mod),
        Step(f"go get -tool {TOOL}@{version}", [go, "get", "-tool", f"{TOOL}@{version}"], mod),
        Step(
            f"go list -m {MODULE}",
            [go, "list", "-m", "-f", "{{.Dir}}", MODULE],
            mod,
        ),
    ]


def build_step(go: str, scratch: Path) -> Step:
    """``go build`` in the copied source (``scratch/src``) into ``scratch/ferretdb``."""
    return Step(
        "go build ./cmd/ferretdb",
        [go, "build", "-o", str(scratch / "ferretdb"), "./cmd/ferretdb"],
        scratch / "src",
    )


def go_env() -> dict[str, str]:
    """The environment of the go commands: no VCS stamping (the copied source is not a
    repository, and a scratch dir inside one must not be stamped with it)."""
    env = dict(os.environ)
    flags = env.get("GOFLAGS", "")
    if "-buildvcs" not in flags:
        env["GOFLAGS"] = (flags + " -buildvcs=false").strip()
    return env


def build(
    version: str = FERRETDB_VERSION, timeout: float = BUILD_TIMEOUT_S, quiet: bool = True
) -> Path:
    """Return the cached FerretDB binary, building it with Go first when it is missing."""
    target = binary_path(version)
    if available(version):
        return target
    go, why_not = usable_go(version)
    if go is None:
        raise LoadtowerError(why_not)
    target.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    env = go_env()
    # the scratch dir sits beside the cache entry: the final rename stays on one filesystem
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        (scratch / "mod").mkdir()
        source = ""
        for step in fetch_steps(go, scratch, version):
            source = _run(step, env, deadline, timeout, quiet).strip()
        _copy_source(Path(source), scratch / "src", version)
        _run(build_step(go, scratch), env, deadline, timeout, quiet)
        built = scratch / "ferretdb"
        if not os.access(built, os.X_OK):
            raise LoadtowerError(f"go build finished but wrote no binary at {built}")
        os.replace(built, target)
    finally:
        _remove(scratch)
    return target


def _run(step: Step, env: dict[str, str], deadline: float, timeout: float, quiet: bool) -> str:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _timeout_error(step, timeout)
    try:
        code, out, err = run_bounded(step.argv, step.cwd, True, left, env=env)
    except subprocess.TimeoutExpired:
        raise _timeout_error(step, timeout) from None
    except OSError as exc:
        raise LoadtowerError(f"building FerretDB: cannot run {step.argv[0]}: {exc}") from exc
    if not quiet and err.strip():
        print(err.strip())
    if code != 0:
        text = (err or out).strip()
        if any(mark in text for mark in PROXY_TROUBLE):
            proxy = env.get("GOPROXY") or "https://proxy.golang.org,direct"
            raise LoadtowerError(
                f"building FerretDB: `{step.what}` could not reach the Go module proxy "
                f"(GOPROXY={proxy}): {_last_line(text)}"
            )
        raise LoadtowerError(f"building FerretDB: `{step.what}` failed: {_last_line(text)}")
    return out


def _timeout_error(step: Step, timeout: float) -> LoadtowerError:
    return LoadtowerError(
        f"building FerretDB did not finish within {timeout:g} s (stuck at `{step.what}`; is "
        "the Go module proxy reachable? see GOPROXY); run `loadtower sandbox fetch` to retry"
    )


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def _copy_source(module_dir: Path, dest: Path, version: str) -> None:
    """Copy the module out of GOMODCACHE (files there are read-only), make it writable
    and stamp the version FerretDB embeds."""
    if not (module_dir / "cmd" / "ferretdb").is_dir():
        raise LoadtowerError(f"building FerretDB: no cmd/ferretdb in {module_dir or '(empty)'}")
    shutil.copytree(module_dir, dest, copy_function=shutil.copyfile)
    _make_writable(dest)
    (dest / "build" / "version" / "version.txt").write_text(version + "\n")


def _make_writable(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, os.stat(dirpath).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        for name in files:
            path = os.path.join(dirpath, name)
            os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)


def _remove(path: Path) -> None:
    if path.exists():
        _make_writable(path)
        shutil.rmtree(path, ignore_errors=True)
