"""The local channel between the Locust workers of one agent host: the followers hand
their lines to the lead (worker 0) over a Unix socket, the lead merges and sends them on
to the master, then acks.

Wire format, newline-delimited UTF-8:
- follower -> lead: ``H <agent>`` first, then ``I <n> <json>`` (an interval line) or
  ``L <n> <json>`` (any other line), n = 1, 2, 3... per connection;
- lead -> follower: ``A <n>``: every frame numbered <= n has been handed on.

Only stdlib ``socket``/``threading``: cooperative under gevent's monkey patching, real
threads without it. A relay that breaks stays down; the follower then sends its lines
itself, starting with the ones never acked (:meth:`RelayFollower.take_unacked`).
"""

from __future__ import annotations

import errno
import functools
import os
import socket
import stat
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from loadtower.agents.private_files import UnsafePath, check_private_dir

MAX_SOCKET_PATH = 107  # bytes: sun_path is 108 with its terminating NUL
MAX_LINE = 1 << 22  # a longer frame is malformed
SEND_TIMEOUT_S = 5.0  # a peer that stops reading this long counts as down
JOIN_TIMEOUT_S = 2.0
_CHUNK = 1 << 16
_KINDS = ("I", "L")
_TRANSIENT = (
    errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.ECONNABORTED,
)


class _Malformed(Exception):
    pass


def _nothing(_agent: str) -> None:
    pass


def _say(message: str) -> None:
    sys.stderr.write(f"loadtower merge relay: {message}\n")


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Lines:
    """Complete lines (without the newline) read from a socket with a timeout; a timeout
    is no data (the reader stops when `stopped()`), EOF ends it (a partial line is lost)."""

    def __init__(self, sock: socket.socket, stopped: Callable[[], bool]) -> None:
        self._sock, self._stopped = sock, stopped
        self._buf = bytearray()
        self._scan = 0

    def next(self) -> bytes | None:
        while True:
            end = self._buf.find(b"\n", self._scan)
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                self._scan = 0
                return line
            self._scan = len(self._buf)
            if self._scan > MAX_LINE:
                raise _Malformed(f"a line longer than {MAX_LINE} bytes")
            try:
                chunk = self._sock.recv(_CHUNK)
            except TimeoutError:
                if self._stopped():
                    return None
                continue
            if not chunk:
                return None
            self._buf += chunk


class _Conn:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.send_lock = threading.Lock()
        self.agent: str | None = None


class RelayLead:
    """Worker 0's end: accepts followers, hands their frames to `on_frame`, sends acks."""

    def __init__(self, path: str, on_frame: Callable[[str, int, str, str], None],
                 on_join: Callable[[str], None] = _nothing,
                 on_leave: Callable[[str], None] = _nothing) -> None:
        self.path = path
        self._on_frame, self._on_join, self._on_leave = on_frame, on_join, on_leave
        self._lock = threading.Lock()
        self._conns: set[_Conn] = set()
        self._by_agent: dict[str, _Conn] = {}
        self._threads: list[threading.Thread] = []
        self._listener: socket.socket | None = None
        self._made: tuple[int, int] | None = None  # (st_dev, st_ino) of the socket file
        self._closed = False

    def start(self) -> None:
        """Bind, listen and accept in a daemon thread; UnsafePath, ValueError, OSError."""
        if len(os.fsencode(self.path)) > MAX_SOCKET_PATH:
            raise ValueError(f"{self.path}: a Unix socket path may have at most "
                             f"{MAX_SOCKET_PATH} bytes")
        check_private_dir(Path(self.path).parent)
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            pass
        else:
            if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
                raise UnsafePath(f"{self.path}: exists and is not a socket of this user: "
                                 "refusing to replace it")
            os.unlink(self.path)  # a dead lead's socket
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.path)
            info = os.lstat(self.path)
            self._made = (info.st_dev, info.st_ino)
            os.chmod(self.path, 0o600)
            listener.listen(64)
        except BaseException:
            listener.close()
            self._unlink()
            raise
        self._listener = listener
        self._spawn(lambda: self._accept(listener), "accept")

    def _spawn(self, target: Callable[[], None], what: str) -> None:
        thread = threading.Thread(target=target, daemon=True, name=f"merge-relay-{what}")
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def _accept(self, listener: socket.socket) -> None:
        try:
            while True:
                try:
                    sock, _ = listener.accept()
                except OSError as exc:
                    if self._closed:
                        return
                    if exc.errno not in _TRANSIENT:
                        raise
                    time.sleep(0.1)  # out of file descriptors or memory: for now
                    continue
                sock.settimeout(SEND_TIMEOUT_S)
                with self._lock:
                    if self._closed:
                        sock.close()
                        return
                    conn = _Conn(sock)
                    self._conns.add(conn)
                self._spawn(functools.partial(self._serve, conn), "serve")
        except Exception as exc:  # the relay stops taking followers
            _say(f"{self.path}: stopped accepting: {exc}")
        finally:
            listener.close()

    def _serve(self, conn: _Conn) -> None:
        agent: str | None = None
        try:
            lines = _Lines(conn.sock, lambda: self._closed)
            first = lines.next()
            if first is None:
                return
            head = first.decode()
            if not head.startswith("H ") or not head[2:] or " " in head[2:]:
                raise _Malformed(f"a first frame that is not 'H <agent>': {head[:80]!r}")
            with self._lock:
                if head[2:] in self._by_agent:
                    raise _Malformed(f"{head[2:]} is connected already")
                agent = conn.agent = head[2:]
                self._by_agent[agent] = conn
            self._on_join(agent)
            expected = 1
            while (line := lines.next()) is not None:
                parts = line.decode().split(" ", 2)
                if len(parts) != 3 or parts[0] not in _KINDS or parts[1] != str(expected):
                    raise _Malformed(f"{line[:40]!r}: not a frame 'I|L {expected} <text>'")
                self._on_frame(agent, expected, parts[0], parts[2])
                expected += 1
        except Exception as exc:  # malformed frame, socket error, callback
            if not self._closed:
                _say(f"{agent or 'a follower'}: connection dropped: "
                     f"{type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                self._conns.discard(conn)
                if agent is not None and self._by_agent.get(agent) is conn:
                    del self._by_agent[agent]
            _shutdown(conn.sock)
            with conn.send_lock:  # not under an ack's sendall
                conn.sock.close()
            if agent is not None:
                try:
                    self._on_leave(agent)
                except Exception as exc:
                    _say(f"{agent}: on_leave failed: {type(exc).__name__}: {exc}")

    def ack(self, agent: str, n: int) -> None:
        """Tell `agent` that its frames up to `n` are handed on; a gone follower: ignored."""
        with self._lock:
            conn = self._by_agent.get(agent)
        if conn is None:
            return
        try:
            with conn.send_lock:
                conn.sock.sendall(b"A %d\n" % n, socket.MSG_NOSIGNAL)
        except OSError:
            _shutdown(conn.sock)  # its reader ends it

    def parties(self) -> list[str]:
        """The agents connected now (after their H frame)."""
        with self._lock:
            return sorted(self._by_agent)

    def close(self) -> None:
        """Stop accepting, close every connection, remove the socket file made here."""
        with self._lock:
            self._closed = True
            conns, threads = list(self._conns), list(self._threads)
        if self._listener is not None:
            _shutdown(self._listener)
        for conn in conns:
            _shutdown(conn.sock)
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(JOIN_TIMEOUT_S)
        self._unlink()

    def _unlink(self) -> None:
        made, self._made = self._made, None
        if made is None:
            return
        try:
            info = os.lstat(self.path)
            if (info.st_dev, info.st_ino) == made:  # not a newer lead's socket
                os.unlink(self.path)
        except OSError:
            pass


class RelayFollower:
    """A worker's end: hands frames to the lead and keeps them until acked."""

    def __init__(self, path: str, agent: str, connect_timeout: float = 10.0) -> None:
        if not agent or any(c.isspace() for c in agent):
            raise ValueError(f"{agent!r}: an agent name must be non-empty without spaces")
        self.path, self.agent, self.connect_timeout = path, agent, connect_timeout
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._send_lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._reader: threading.Thread | None = None
        self._unacked: deque[tuple[int, str, str]] = deque()
        self._sent = 0
        self._given_back = False
        self._up = False
        self._tried = False
        self._closed = False

    @property
    def up(self) -> bool:
        return self._up

    def connect(self) -> bool:
        """Connect (retrying every 0.1 s for `connect_timeout`), send H, read acks; False
        if the lead could not be reached. Once only: a relay that went down stays down."""
        with self._lock:
            if self._tried:
                return self._up
            self._tried = True
        deadline = time.monotonic() + self.connect_timeout
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(SEND_TIMEOUT_S)
            try:
                sock.connect(self.path)
                sock.sendall(f"H {self.agent}\n".encode(), socket.MSG_NOSIGNAL)
                break
            except OSError:
                sock.close()
                if self._closed or time.monotonic() + 0.1 > deadline:
                    return False
                time.sleep(0.1)
        with self._lock:
            if self._closed:
                sock.close()
                return False
            self._sock, self._up = sock, True
        self._reader = threading.Thread(target=self._read_acks, args=(sock,), daemon=True,
                                        name="merge-relay-acks")
        self._reader.start()
        return True

    def _down(self) -> None:
        with self._lock:
            self._up = False
            self._changed.notify_all()

    def _read_acks(self, sock: socket.socket) -> None:
        try:
            lines = _Lines(sock, lambda: self._closed)
            while (line := lines.next()) is not None:
                kind, _, number = line.decode().partition(" ")
                if kind != "A" or not number.isdigit():
                    raise _Malformed(f"not an ack: {line[:80]!r}")
                upto = int(number)
                with self._lock:
                    while self._unacked and self._unacked[0][0] <= upto:
                        self._unacked.popleft()
                    self._changed.notify_all()
        except Exception as exc:  # the relay is down either way
            if not self._closed:
                _say(f"{self.agent}: relay down: {type(exc).__name__}: {exc}")
        finally:
            self._down()
            _shutdown(sock)

    def send(self, kind: str, text: str) -> bool:
        """Hand a frame ("I" or "L", one line of text) to the lead; False when the relay is
        down: then the frame was not delivered and the caller sends it itself."""
        if kind not in _KINDS or "\n" in text:
            raise ValueError(f"a frame is I or L with one line of text, not {kind!r}")
        with self._send_lock:
            with self._lock:
                sock = self._sock
                if not self._up or sock is None:
                    return False
                n = self._sent + 1
                self._unacked.append((n, kind, text))
            try:
                sock.sendall(f"{kind} {n} {text}\n".encode(), socket.MSG_NOSIGNAL)
            except OSError:
                with self._lock:  # never whole at the lead: the caller's to send
                    if self._unacked and self._unacked[-1][0] == n:
                        self._unacked.pop()
                _shutdown(sock)
                self._down()
                return False
            self._sent = n
            return True

    def take_unacked(self) -> list[tuple[str, str]]:
        """Once the relay is down: the frames sent but never acked, in order, each once."""
        with self._lock:
            if self._up or not self._unacked:
                return []
            frames = [(kind, text) for _, kind, text in self._unacked]
            self._unacked.clear()
            self._given_back = True
            self._changed.notify_all()
            return frames

    def wait_acked(self, timeout: float) -> bool:
        """True once every frame sent so far is acked; False if the relay is down with
        frames unacked (or some were given back by take_unacked) or `timeout` passes."""
        with self._lock:
            self._changed.wait_for(lambda: not self._unacked or not self._up, timeout)
            return not self._unacked and not self._given_back

    def close(self) -> None:
        """Stop: the relay is down from now on (unacked frames stay for take_unacked)."""
        with self._lock:
            self._closed, self._up = True, False
            sock, self._sock = self._sock, None
            self._changed.notify_all()
        if sock is None:
            return
        _shutdown(sock)
        reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join(JOIN_TIMEOUT_S)
        with self._send_lock:
            sock.close()

