"""The sandbox's ClickHouse: ClickHouse's own engine (chdb) behind a small HTTP endpoint.

**Timings against this endpoint mean nothing**: every request is served by ONE chdb
Session under ONE lock, by a Python HTTP server. Only the client path
(clickhouse-connect over HTTP) is real, and the engine behind it is ClickHouse's own
(chdb), so SQL, types, formats and error codes are the real ones. It exists because no
modern ClickHouse server installs on the development machines (Debian ships 18.16).

What it speaks of ClickHouse's HTTP interface: ``GET /ping`` -> ``Ok.\\n``; GET/POST with
the query in the ``query`` parameter and/or the body (a body after ``query`` is appended
to it); ``INSERT ... FORMAT <fmt>`` + data body (clickhouse-connect: Native blocks,
chunked, lz4/zstd/br/gzip/deflate Content-Encoding) -> chdb's streaming insert in that
input format; output in the query's own ``FORMAT`` (clickhouse-connect appends ``FORMAT
Native``), else ``default_format``, else TabSeparated, bytes passed through, never
compressed; ``database`` -> ``USE``; ``param_<name>`` -> ``{name:Type}`` bindings; other
parameters naming a setting are SET for the request and reset after, the rest
(session_id, query_id, ...) ignored. Errors: HTTP 500 (403 for authentication), body
``Code: N. DB::Exception: ...``, header ``X-ClickHouse-Exception-Code``. One user:
Basic auth, X-ClickHouse-User/Key or user/password parameters; else code 516. Every
reply (``/ping`` too) carries ``X-ClickHouse-Server-Display-Name: loadtower-sandbox-chdb``,
which is how a run recognises this endpoint and warns that its timings mean nothing.

``chdb_server()`` serves a throw-away database in a thread (the test suite's);
``python -m loadtower.engines.clickhouse.sandbox.chdb_server ...`` is the server process that
``loadtower sandbox up`` starts (engines/clickhouse/sandbox/service.py).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import re
import shutil
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

DISPLAY_NAME = "loadtower-sandbox-chdb"  # X-ClickHouse-Server-Display-Name of every reply
AUTHENTICATION_FAILED = 516
STD_EXCEPTION = 1001
# URL parameters of the HTTP protocol itself, never applied as settings
PROTOCOL = frozenset(
    "query database default_format session_id session_timeout session_check query_id user "
    "password quota_key compress decompress buffer_size wait_end_of_query readonly "
    "send_progress_in_http_headers http_headers_progress_interval_ms enable_http_compression "
    "http_zlib_compression_level client_protocol_version role".split()
)
_INSERT = re.compile(r"^\s*(INSERT\s+INTO\s+.+?)\s+FORMAT\s+(\w+)\s*;?\s*$", re.I | re.S)
_INLINE_INSERT = re.compile(rb"^\s*(INSERT\s+INTO\s+.+?\s+FORMAT\s+\w+)[ \t]*\r?\n", re.I | re.S)
_CODE = re.compile(r"Code:\s*(\d+)")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


class ChError(Exception):
    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code


def _ch_error(exc: Exception) -> ChError:
    text = str(exc)
    m = _CODE.search(text)
    if m is None:
        return ChError(STD_EXCEPTION, f"Code: {STD_EXCEPTION}. DB::Exception: {text}")
    return ChError(int(m.group(1)), text[m.start() :])


def _literal(value: str) -> str:
    if _NUMBER.match(value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _decode(data: bytes, encoding: str | None) -> bytes:
    """Undo a request body's Content-Encoding (clickhouse-connect compresses inserts)."""
    enc = (encoding or "identity").strip().lower()
    if not data or enc == "identity":
        return data
    decompress: Callable[[bytes], bytes]
    if enc == "lz4":
        import lz4.frame

        decompress = lz4.frame.decompress
    elif enc == "zstd":
        import backports.zstd  # clickhouse-connect's own dependency

        decompress = backports.zstd.decompress
    elif enc == "br":
        import brotli

        decompress = brotli.decompress
    elif enc in ("gzip", "deflate"):
        decompress = gzip.decompress if enc == "gzip" else zlib.decompress
    else:
        raise ChError(STD_EXCEPTION, f"Code: {STD_EXCEPTION}. DB::Exception: encoding {enc}?")
    return decompress(data)


class ChdbEngine:
    """One chdb Session, one lock: requests run one at a time."""

    def __init__(self, path: str) -> None:
        import chdb.session

        self.session: Any = chdb.session.Session(path)
        self.lock = threading.Lock()
        self.database = "default"
        names = self._query("SELECT name FROM system.settings")
        self.setting_names = frozenset(names.decode().split())

    def _query(self, sql: str, fmt: str = "TabSeparated", params: dict | None = None) -> bytes:
        try:
            return self.session.query(sql, fmt, params=params or None).bytes()
        except Exception as exc:  # noqa: BLE001 - chdb raises its own error types
            raise _ch_error(exc) from None

    def _insert(self, head: str, fmt: str, data: bytes) -> int:
        try:
            with self.session.send_insert(head, fmt) as ins:
                if data:
                    ins.append(data)
                return int(ins.finish().rows_written)
        except Exception as exc:  # noqa: BLE001
            raise _ch_error(exc) from None

    def run(self, sql: str, data: bytes | None, fmt: str, q: dict[str, str]) -> tuple[bytes, int]:
        """(response body, rows written) of ``sql`` (an INSERT head when ``data`` is given)
        run with the request's URL parameters ``q``."""
        database = q.get("database") or "default"
        settings = {k: v for k, v in q.items() if k not in PROTOCOL and k in self.setting_names}
        params = {k[6:]: v for k, v in q.items() if k.startswith("param_")}
        with self.lock:
            if database != self.database:
                self._query(f"USE `{database.replace('`', '')}`")
                self.database = database
            applied: list[str] = []
            try:
                for name, value in settings.items():
                    self._query(f"SET {name} = {_literal(value)}")
                    applied.append(name)
                if data is not None:
                    m = _INSERT.match(sql)
                    assert m is not None
                    return b"", self._insert(m.group(1), m.group(2), data)
                return self._query(sql, fmt, params), 0
            finally:
                for name in applied:
                    with contextlib.suppress(ChError):
                        self._query(f"SET {name} = DEFAULT")

    def close(self) -> None:
        self.session.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # the load agents open up to one connection per op in flight (128 and more): with
    # socketserver's default backlog of 5 the kernel resets the ones that do not fit
    request_queue_size = 1024
    engine: ChdbEngine
    user: str
    password: str


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self._serve()

    do_GET = do_POST

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            data = b"".join(parts)
        else:
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        return _decode(data, self.headers.get("Content-Encoding"))

    def _credentials(self, q: dict[str, str]) -> tuple[str, str]:
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            return user, password
        user = self.headers.get("X-ClickHouse-User") or q.get("user") or "default"
        return user, self.headers.get("X-ClickHouse-Key") or q.get("password") or ""

    def _reply(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("X-ClickHouse-Server-Display-Name", DISPLAY_NAME)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _serve(self) -> None:
        url = urlsplit(self.path)
        q = dict(parse_qsl(url.query, keep_blank_values=True))
        query_id = q.get("query_id", "")
        try:
            body = self._body() if self.command == "POST" else b""
            if url.path.rstrip("/") == "/ping" or (not body and "query" not in q):
                self._reply(200, b"Ok.\n", {"Content-Type": "text/html; charset=UTF-8"})
                return
            user, password = self._credentials(q)
            if (user, password) != (self.server.user, self.server.password):
                raise ChError(
                    AUTHENTICATION_FAILED,
                    f"Code: {AUTHENTICATION_FAILED}. DB::Exception: {user}: Authentication failed: "
                    "password is incorrect, or there is no user with such name. "
                    "(AUTHENTICATION_FAILED)",
                )
            sql, data = self._split(q.get("query", ""), body)
            fmt = q.get("default_format") or "TabSeparated"
            out, written = self.server.engine.run(sql, data, fmt, q)
            summary = dict.fromkeys(("read_rows", "read_bytes", "written_bytes"), "0")
            summary.update(written_rows=str(written), result_bytes=str(len(out)))
            headers = {"Content-Type": "application/octet-stream", "X-ClickHouse-Format": fmt}
            headers["X-ClickHouse-Summary"] = json.dumps(summary)
            self._reply(200, out, headers | self._ids(query_id))
        except Exception as exc:  # noqa: BLE001 - every failure is a ClickHouse error reply
            err = exc if isinstance(exc, ChError) else _ch_error(exc)
            status = 403 if err.code == AUTHENTICATION_FAILED else 500
            headers = {"Content-Type": "text/plain; charset=UTF-8"} | self._ids(query_id)
            headers["X-ClickHouse-Exception-Code"] = str(err.code)
            self._reply(status, (str(err) + "\n").encode(), headers)

    @staticmethod
    def _ids(query_id: str) -> dict[str, str]:
        return {"X-ClickHouse-Query-Id": query_id, "X-ClickHouse-Timezone": "UTC"}

    @staticmethod
    def _split(query: str, body: bytes) -> tuple[str, bytes | None]:
        """(sql, insert data or None) from the ``query`` parameter and the body; a body
        alone may be ``INSERT ... FORMAT f`` + newline + data (clickhouse-connect does so)."""
        if query and _INSERT.match(query):
            return query, body
        if query:
            return (query + "\n" + body.decode()) if body else query, None
        m = _INLINE_INSERT.match(body)
        if m is not None:
            return m.group(1).decode(), body[m.end() :]
        return body.decode(), None


@contextlib.contextmanager
def chdb_server(user: str = "default", password: str = "secret") -> Iterator[tuple[str, int]]:
    """Serve a fresh chdb database over HTTP on 127.0.0.1; yields (host, port).
    On exit (failures included) the server stops and the database directory goes."""
    with contextlib.ExitStack() as stack:  # callbacks run last-in, first-out
        path = tempfile.mkdtemp(prefix="chdb-http-")
        stack.callback(shutil.rmtree, path, True)
        engine = ChdbEngine(path)
        stack.callback(engine.close)
        server = _Server(("127.0.0.1", 0), _Handler)
        stack.callback(server.server_close)
        server.engine, server.user, server.password = engine, user, password
        thread = threading.Thread(target=server.serve_forever, name="chdb-http", daemon=True)
        thread.start()
        stack.callback(thread.join, 10)
        stack.callback(server.shutdown)
        yield "127.0.0.1", server.server_address[1]


def serve(address: str, port: int, user: str, password: str, data: str) -> None:
    """Serve ``data`` (a chdb database directory, kept) on address:port until SIGTERM/SIGINT."""
    import signal

    engine = ChdbEngine(data)
    server = _Server((address, port), _Handler)
    server.engine, server.user, server.password = engine, user, password
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    thread = threading.Thread(target=server.serve_forever, name="chdb-http", daemon=True)
    thread.start()
    print(
        f"ClickHouse engine (chdb) serving {data} on http://{address}:{port} as user {user}. "
        "Its TIMINGS MEAN NOTHING: one Python HTTP server, one lock, one query at a time.",
        flush=True,
    )
    try:
        stop.wait()
    finally:
        server.shutdown()
        thread.join(10)
        server.server_close()
        engine.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m loadtower.engines.clickhouse.sandbox.chdb_server --address A --port P --data DIR ...``:
    the endpoint as a server process (what engines/clickhouse/sandbox/service.py starts)."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--user", default="default")
    parser.add_argument("--password-file", type=Path, required=True)
    parser.add_argument("--data", required=True, help="chdb database directory (kept)")
    args = parser.parse_args(argv)
    serve(args.address, args.port, args.user, args.password_file.read_text().strip(), args.data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
