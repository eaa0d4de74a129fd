"""A TCP relay in front of the sandbox's sshd: one agent host's whole SSH link.

Two ways for that host's network to go away for ``seconds``:

- ``cut(seconds, "refused")``: every relayed connection is closed at once (sshd's
  session for it ends, so do its port forwards; the orchestrator's connection is lost)
  and for ``seconds`` nothing can connect (connection refused). Then the same port
  listens again.
- ``cut(seconds, "dark")``: for ``seconds`` nothing moves (bytes already sent sit in the
  relay and are lost), then every connection is closed, as TCP or SSH keepalives end a
  dead link; new connections are taken at once. What the agent sent into the dark link
  is lost on the way, so only its spool still has it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time


class TcpRelay:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.cuts = 0
        self.closed = False
        self.flowing = threading.Event()
        self.flowing.set()
        self.listener = self._listen()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _listen(self) -> socket.socket:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen(16)
        sock.settimeout(0.2)
        self.port = sock.getsockname()[1]
        return sock

    def _accept(self) -> None:
        while not self.closed:
            listener = self.listener
            try:
                client, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            client.settimeout(None)
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                self.flowing.wait()  # in the dark: held, then dropped with the connection
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _drop_all(self) -> None:
        with self.lock:
            sockets, self.sockets = self.sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()

    def cut(self, seconds: float, how: str = "refused") -> None:
        self.cuts += 1
        if how == "dark":
            self.flowing.clear()
            time.sleep(seconds)
            self._drop_all()
            self.flowing.set()
            return
        self.listener.close()
        self._drop_all()
        time.sleep(seconds)
        self.listener = self._listen()

    def close(self) -> None:
        self.closed = True
        self.flowing.set()
        with contextlib.suppress(OSError):
            self.listener.close()
        self._drop_all()
        self.thread.join(timeout=5)
