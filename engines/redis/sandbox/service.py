"""The sandbox's Redis host ``redis1``: a real ``redis-server`` (Debian's ``redis-server``
package; Redis 7).

`loadtower sandbox up` starts it when ``redis-server`` is installed (``--redis`` /
``--no-redis``): on node 1's address (127.0.0.1 in the default sandbox), port 6379 when
free, data in DIR/redis/data (RDB snapshots at Redis's default save points and at a clean
stop, loaded again at a start), output in DIR/logs/redis.log. Login ``loadtower`` with a
random password kept in DIR/secrets/redis.password (mode 0600); the default user is off,
so a client without the login is refused. The password reaches the server through its
configuration file, DIR/redis/redis.conf (mode 0600, written anew at each start, never
through a symlink), never its command line. The inventory's host ``redis1`` reaches it;
its actions call `loadtower sandbox redis ACTION --dir DIR` (sandbox/engine_services.py
runs it like every engine host).

These are a real Redis server's timings, on a machine shared with the rest of the
sandbox.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.sandbox.engine_services import EngineService
from loadtower.sandbox.state import SandboxState
from loadtower.sandbox.toml_values import q

BINARY = "redis-server"


def binary() -> str | None:
    return shutil.which(BINARY) or next(
        (p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if os.access(p, os.X_OK)),
        None)


def home(directory: Path) -> Path:
    return directory / "redis"


def write_private(path: Path, text: str) -> None:
    """`text` into `path`, mode 0600, in a 0700 folder; never through a symlink (a new
    file renamed over the old one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _quoted(text: str) -> str:
    """A value for redis.conf: in double quotes, with backslashes and quotes escaped (a
    sandbox folder may hold spaces)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class RedisService(EngineService):
    name = "redis"
    host = "redis1"
    title = "Redis"
    server = "redis-server"
    preferred_port = 6379
    up_help = ("run the Redis host (a real redis-server); default: when redis-server is "
               "installed. --no-redis stops a running one")
    warning = ("Redis timings from the sandbox are a real redis-server's, on a machine the "
               "sandbox's other servers and the load share")
    running_note = "redis-server"
    fetch_help = "fail when redis-server is not installed instead of going on without Redis"
    about = ("When redis-server is installed it also runs a Redis host: a real redis-server "
             "on node 1's address (port 6379 when free), login 'loadtower' with a random "
             "password.")

    def available(self) -> bool:
        return binary() is not None

    def missing_reason(self) -> str:
        return ("redis-server is not installed (apt-get install redis-server): the sandbox "
                "runs without Redis")

    def engine(self) -> str:
        path = binary()
        if path is None:
            return "Redis (not installed)"
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=10, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            return "Redis"
        version = next((w.split("=", 1)[1] for w in out.split() if w.startswith("v=")), "")
        return f"Redis {version}".strip()

    def config(self, directory: Path, host: str, port: int, data: Path) -> str:
        return "\n".join([
            "# written by loadtower's sandbox at each start: edits are lost",
            f"bind {host}",
            f"port {port}",
            "protected-mode yes",
            "daemonize no",
            'logfile ""',
            f"dir {_quoted(str(data))}",
            "dbfilename dump.rdb",
            "appendonly no",
            "user default off",
            f"user {self.username} on >{self.password(directory)} ~* &* +@all",
            "",
        ])

    def argv(self, directory: Path, host: str, port: int, data_root: Path | None = None
             ) -> list[str]:
        path = binary()
        if path is None:
            raise LoadtowerError(self.missing_reason())
        data = home(data_root or directory) / "data"
        data.mkdir(parents=True, exist_ok=True)
        conf = home(directory) / "redis.conf"
        write_private(conf, self.config(directory, host, port, data))
        return [path, str(conf)]

    def ping(self, host: str, port: int, timeout: float = 2.0) -> bool:
        """True when the server answers a PING (refused with NOAUTH without the login:
        still an answer)."""
        try:
            with socket.create_connection((host, port), timeout=timeout) as sock:
                sock.settimeout(timeout)
                sock.sendall(b"PING\r\n")
                reply = sock.recv(64)
        except OSError:
            return False
        return reply.startswith((b"+PONG", b"-NOAUTH"))

    def url(self, host: str, port: int) -> str:
        return f"redis://{host}:{port}"

    def inventory_section(self, directory: Path, state: SandboxState) -> list[str]:
        return [
            f"# redis1: {self.engine()} (redis-server).",
            "[redis]",
            f"port = {state.ports[self.name]}",
            f"username = {q(self.username)}",
            f"password_file = {q(str(self.password_file(directory)))}",
        ]

    def fetch(self, require: bool) -> None:
        """Nothing to build: say whether redis-server is here (an error when
        ``require``)."""
        if self.available():
            print(f"{self.engine()} in {binary()}")
            return
        if require:
            raise LoadtowerError(f"{self.missing_reason()} (--require-redis / "
                                 "$LOADTOWER_REQUIRE_REDIS=1)")
        print(self.missing_reason())


SERVICE = RedisService()
