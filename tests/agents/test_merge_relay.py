"""agents/merge_relay.py: followers hand their lines to the lead over a Unix socket, the
lead acks, a broken relay gives the unacked frames back, unsafe paths are refused."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from loadtower.agents.merge_relay import RelayFollower, RelayLead
from loadtower.agents.private_files import UnsafePath

WAIT_S = 10.0


def wait_for(check: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


class Seen:
    """The lead's callbacks, recorded."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.lock = threading.Lock()
        self.frames: list[tuple[str, int, str, str]] = []
        self.joined: list[str] = []
        self.left: list[str] = []
        self.fail_on = fail_on

    def frame(self, agent: str, n: int, kind: str, text: str) -> None:
        if text == self.fail_on:
            raise RuntimeError("callback failed")
        with self.lock:
            self.frames.append((agent, n, kind, text))

    def join(self, agent: str) -> None:
        with self.lock:
            self.joined.append(agent)

    def leave(self, agent: str) -> None:
        with self.lock:
            self.left.append(agent)

    def of(self, agent: str) -> list[tuple[int, str, str]]:
        with self.lock:
            return [(n, kind, text) for a, n, kind, text in self.frames if a == agent]


def frames_are(seen: Seen, agent: str,
               expect: list[tuple[int, str, str]]) -> Callable[[], bool]:
    return lambda: seen.of(agent) == expect


def left_once(seen: Seen, agent: str) -> Callable[[], bool]:
    return lambda: seen.left.count(agent) == 1


def closed_by_lead(path: Path, data: bytes) -> bool:
    """`data` sent from a raw client; True when the lead then closes the connection."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
        raw.settimeout(WAIT_S)
        raw.connect(str(path))
        raw.sendall(data)
        try:
            return raw.recv(100) == b""
        except ConnectionResetError:  # closed with some of `data` unread
            return True


@pytest.fixture
def folder() -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix="lt"))  # short: a socket path has at most 107 bytes
    os.chmod(made, 0o700)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture
def cleanup() -> Iterator[list[RelayLead | RelayFollower]]:
    ends: list[RelayLead | RelayFollower] = []
    try:
        yield ends
    finally:
        for end in reversed(ends):
            end.close()
    assert wait_for(lambda: not any(t.name.startswith("merge-relay-")
                                    for t in threading.enumerate()))


def lead_at(path: Path, seen: Seen, ends: list[RelayLead | RelayFollower]) -> RelayLead:
    lead = RelayLead(str(path), seen.frame, on_join=seen.join, on_leave=seen.leave)
    ends.append(lead)
    lead.start()
    return lead


def follower_at(path: Path, agent: str, ends: list[RelayLead | RelayFollower]) -> RelayFollower:
    follower = RelayFollower(str(path), agent, connect_timeout=WAIT_S)
    ends.append(follower)
    assert follower.connect()
    return follower


def test_two_followers_frames_arrive_in_order_and_are_acked(
        folder: Path, cleanup: list[RelayLead | RelayFollower]) -> None:
    seen = Seen()
    path = folder / "relay.sock"
    lead = lead_at(path, seen, cleanup)
    assert os.stat(path).st_mode & 0o777 == 0o600
    one, two = follower_at(path, "host1/1", cleanup), follower_at(path, "host1/2", cleanup)
    assert wait_for(lambda: lead.parties() == ["host1/1", "host1/2"])
    assert sorted(seen.joined) == ["host1/1", "host1/2"]
    big = '{"x": "' + "y" * 9000 + '"}'
    sent = {one: [("I", '{"s": 1}'), ("L", "{}"), ("I", big)],
            two: [("L", '{"a": [1, 2]}'), ("I", " spaced  text ")]}
    for follower, frames in sent.items():
        for kind, text in frames:
            assert follower.send(kind, text)
    for follower, frames in sent.items():
        expect = [(n, kind, text) for n, (kind, text) in enumerate(frames, 1)]
        assert wait_for(frames_are(seen, follower.agent, expect))
        assert not follower.wait_acked(0.05)
        lead.ack(follower.agent, len(frames))
        assert follower.wait_acked(WAIT_S)
        assert follower.up
        assert follower.take_unacked() == []
    lead.ack("host9/9", 1)  # nobody: ignored


def test_lead_gone_before_acking_gives_the_unacked_frames_back_once(
        folder: Path, cleanup: list[RelayLead | RelayFollower]) -> None:
    seen = Seen()
    path = folder / "relay.sock"
    lead = lead_at(path, seen, cleanup)
    follower = follower_at(path, "host1/1", cleanup)
    assert follower.send("I", '{"n": 1}')
    assert wait_for(lambda: len(seen.of("host1/1")) == 1)
    lead.ack("host1/1", 1)
    assert follower.wait_acked(WAIT_S)
    assert follower.send("L", '{"n": 2}') and follower.send("I", '{"n": 3}')
    assert wait_for(lambda: len(seen.of("host1/1")) == 3)
    assert follower.take_unacked() == []  # up: nothing to give back
    lead.close()
    assert not path.exists()
    assert not follower.send("L", '{"late": true}')  # a failed write, or EOF seen first
    assert not follower.up
    assert not follower.send("I", "{}")
    assert not follower.wait_acked(1.0)
    assert follower.take_unacked() == [("L", '{"n": 2}'), ("I", '{"n": 3}')]
    assert follower.take_unacked() == []
    assert not follower.connect()  # down for good


def test_a_follower_that_closes_leaves_once(
        folder: Path, cleanup: list[RelayLead | RelayFollower]) -> None:
    seen = Seen()
    path = folder / "relay.sock"
    lead = lead_at(path, seen, cleanup)
    stays, goes = follower_at(path, "host1/1", cleanup), follower_at(path, "host1/2", cleanup)
    assert wait_for(lambda: len(lead.parties()) == 2)
    goes.close()
    assert wait_for(lambda: lead.parties() == ["host1/1"])
    assert wait_for(lambda: seen.left == ["host1/2"])
    assert not goes.up and not goes.send("I", "{}")
    assert stays.send("I", "{}")
    assert wait_for(lambda: seen.of("host1/1") == [(1, "I", "{}")])
    assert seen.left == ["host1/2"]


def test_unsafe_or_overlong_paths_are_refused(
        folder: Path, cleanup: list[RelayLead | RelayFollower]) -> None:
    seen = Seen()
    open_folder = folder / "open"
    open_folder.mkdir()
    os.chmod(open_folder, 0o755)
    with pytest.raises(UnsafePath):
        lead_at(open_folder / "relay.sock", seen, cleanup)
    assert not (open_folder / "relay.sock").exists()
    planted = folder / "relay.sock"
    planted.write_text("keep me")
    with pytest.raises(UnsafePath, match="relay.sock"):
        lead_at(planted, seen, cleanup)
    assert planted.read_text() == "keep me"
    with pytest.raises(ValueError, match="107"):
        lead_at(folder / ("x" * 120), seen, cleanup)
    assert not (folder / ("x" * 120)).exists()


def test_a_malformed_frame_or_failing_callback_drops_only_that_connection(
        folder: Path, cleanup: list[RelayLead | RelayFollower]) -> None:
    seen = Seen(fail_on='"boom"')
    path = folder / "relay.sock"
    lead = lead_at(path, seen, cleanup)
    good = follower_at(path, "host1/1", cleanup)
    for agent, bad in (("raw/1", b"I 3 {}\n"), ("raw/2", b"X 2 {}\n"), ("raw/3", b"I 2\n"),
                       ("raw/4", b"I 2 \xff\n")):
        assert closed_by_lead(path, f"H {agent}\n".encode() + b"I 1 {}\n" + bad)
        assert wait_for(left_once(seen, agent))
    assert closed_by_lead(path, b"I 1 {}\n")  # no H first
    failing = follower_at(path, "host1/2", cleanup)
    assert failing.send("I", '"boom"')
    assert wait_for(lambda: "host1/2" in seen.left)
    assert wait_for(lambda: not failing.up)
    assert failing.take_unacked() == [("I", '"boom"')]
    assert good.send("I", '{"ok": 1}')
    assert wait_for(lambda: seen.of("host1/1") == [(1, "I", '{"ok": 1}')])
    lead.ack("host1/1", 1)
    assert good.wait_acked(WAIT_S)
    assert lead.parties() == ["host1/1"]


def test_a_stale_socket_of_a_dead_lead_is_replaced(
        folder: Path, cleanup: list[RelayLead | RelayFollower]) -> None:
    path = folder / "relay.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()
    assert path.exists()
    seen = Seen()
    lead = lead_at(path, seen, cleanup)
    follower = follower_at(path, "host1/1", cleanup)
    assert follower.send("I", "{}")
    assert wait_for(lambda: seen.of("host1/1") == [(1, "I", "{}")])
    lead.ack("host1/1", 1)
    assert follower.wait_acked(WAIT_S)


def test_a_follower_waits_for_a_late_lead_and_gives_up_without_one(
        folder: Path, cleanup: list[RelayLead | RelayFollower]) -> None:
    path = folder / "relay.sock"
    alone = RelayFollower(str(path), "host1/1", connect_timeout=0.3)
    cleanup.append(alone)
    assert not alone.connect() and not alone.up and not alone.send("I", "{}")
    late = RelayFollower(str(path), "host1/2", connect_timeout=WAIT_S)
    cleanup.append(late)
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(late.connect()))
    thread.start()
    time.sleep(0.2)
    seen = Seen()
    lead = lead_at(path, seen, cleanup)
    thread.join(WAIT_S)
    assert result == [True]
    assert wait_for(lambda: lead.parties() == ["host1/2"])
