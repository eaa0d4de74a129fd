"""The Locust master's stdout (its lines to the orchestrator), written by a thread of its
own so that a slow reader never stalls the master (issue 28, control apart from data).

Before, the master wrote and flushed each line on its gevent hub: when the orchestrator
read slower than the workers sent, the pipe filled and the write blocked the whole hub,
so the master stopped reading its commands, its workers' heartbeats and their lines, and
a phase's start was acknowledged minutes late. Now `put` queues the line and returns; the
thread writes what is queued in batches (one write and flush per batch).

- Order is kept: lines are written in the order they were put, so an ack that certifies
  the lines before it (`stopped`, `phase_done`) still follows them. Only `urgent` lines
  go ahead of the queue: the start's `started`, which certifies none of the lines (a
  `failed` stays in order, behind the error events that explain it).
- Bounded: `wait_for_room` (called by the handler of the workers' lines, on the hub)
  waits cooperatively while more than `bound` bytes are queued, so the backlog becomes
  the workers' (their link and spool), not unbounded memory here; the first time in a
  spell, a warning line says so (`backlog`).
- A reader that is gone (a broken pipe) ends the writing; lines put after are dropped.
- Written with os.write to the stream's file descriptor, looping over short writes
  (write_all): Python's buffered stdout lost the rest of a batch when a stop signal
  (SIGSTOP, a frozen cgroup) cut a write blocked on a full pipe short, about 1 MB of
  lines each time (tests/orchestrator/test_master_output_stops.py).
"""

from __future__ import annotations

import io
import json
import os
import select
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TextIO

BOUND_BYTES = 64 * 1024 * 1024  # queued and not yet written: the backlog's bound
BATCH_BYTES = 1024 * 1024  # written at once at most


def write_all(stream: TextIO, text: str) -> None:
    """`text` onto `stream` whole: straight to its file descriptor, each short write
    followed by the rest (a file without a descriptor, a test's: its own write)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        stream.write(text)
        stream.flush()
        return
    stream.flush()  # anything written through the stream before goes first
    # UTF-8, which the orchestrator reads; a lone surrogate becomes its JSON escape (\udcff)
    view = memoryview(text.encode("utf-8", "backslashreplace"))
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:  # a descriptor left non-blocking: wait for room
            select.select([], [fd], [], 1.0)


class MasterOutput:
    def __init__(self, stream: Callable[[], TextIO] = lambda: sys.stdout,
                 bound: int = BOUND_BYTES) -> None:
        self._stream = stream
        self.bound = bound
        self._lines: deque[str] = deque()
        self._urgent: deque[str] = deque()
        self._queued = 0  # bytes in both queues
        self._writing = False  # a batch taken from the queues, not yet flushed
        self._cond = threading.Condition()
        self.closed = False  # the reader is gone
        self.full_spells = 0
        self._thread = threading.Thread(target=self._write_loop, name="master-output",
                                        daemon=True)
        self._thread.start()

    def put(self, line: dict[str, Any], urgent: bool = False) -> None:
        self.put_text(json.dumps(line, separators=(",", ":")), urgent)

    def put_text(self, text: str, urgent: bool = False) -> None:
        """A line already in its JSON text (one line: a worker's interval line)."""
        text += "\n"
        with self._cond:
            if self.closed:
                return
            (self._urgent if urgent else self._lines).append(text)
            self._queued += len(text)
            self._cond.notify()

    def full(self) -> bool:
        return self._queued > self.bound and not self.closed

    def wait_for_room(self, sleep: Callable[[float], Any]) -> None:
        """While over the bound: say so (once a spell) and `sleep` (gevent's, on the hub)."""
        if not self.full():
            return
        self.full_spells += 1
        self.put({"type": "event", "kind": "warning", "ts": time.time(),
                  "message": f"backlog: the orchestrator reads the master's lines slower "
                  f"than the workers send them; {self._queued / 1e6:.0f} MB wait in the "
                  "master and it holds the workers' next lines back until they are read"})
        while self.full():
            sleep(0.01)

    def drain(self, timeout: float) -> bool:
        """Wait until everything put so far is written (or the reader is gone)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while (self._queued or self._writing) and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    def _take(self) -> list[str]:
        batch: list[str] = []
        size = 0
        for queue in (self._urgent, self._lines):
            while queue and (not batch or size < BATCH_BYTES):
                text = queue.popleft()
                batch.append(text)
                size += len(text)
        self._queued -= size
        return batch

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                while not (self._urgent or self._lines):
                    self._writing = False
                    self._cond.notify_all()
                    self._cond.wait()
                batch = self._take()
                self._writing = True
            try:
                write_all(self._stream(), "".join(batch))
            except (OSError, ValueError):  # the reader is gone: nothing to write to
                with self._cond:
                    self.closed = True
                    self._lines.clear()
                    self._urgent.clear()
                    self._queued = 0
                    self._writing = False
                    self._cond.notify_all()
                return
