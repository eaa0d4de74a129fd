"""The driver loop reaches an engine's native load core through its kind's `native_feed`
(agents/native_feed.py), never by importing the engine's package: the CQL kinds name the
Rust core's feed, the others none, and the feed they name has every method the driver
loop calls."""

from __future__ import annotations

import inspect
from typing import Any

from loadtower.agents.driver_loop import DriverLoop
from loadtower.agents.measure import IntervalRecorder
from loadtower.agents.native_feed import NativeFeed, new_feed
from loadtower.protocol.engine_kinds import KINDS, with_capability


def test_the_kinds_with_a_native_core_name_a_feed_and_only_they_get_one() -> None:
    recorder = IntervalRecorder("a/0", "a")
    with_core = set(with_capability(rust_core=True))
    assert with_core == set(with_capability(family="cql")) and with_core
    for name in KINDS:
        feed = new_feed(name, recorder, lambda message: None, lambda line: None)
        assert (feed is not None) == (name in with_core), name


def test_the_named_feed_has_what_the_driver_loop_asks() -> None:
    (name, *_) = with_capability(rust_core=True)
    feed: Any = new_feed(name, IntervalRecorder("a/0", "a"), lambda m: None, lambda line: None)
    wanted = {n for n, v in vars(NativeFeed).items()
              if inspect.isfunction(v) and not n.startswith("_")}
    assert wanted >= {"asked", "drain", "harvest", "close"}
    for method in sorted(wanted):
        ours = inspect.signature(getattr(NativeFeed, method))
        theirs = inspect.signature(getattr(type(feed), method))
        assert list(ours.parameters) == list(theirs.parameters), method
        assert inspect.iscoroutinefunction(getattr(NativeFeed, method)) == \
            inspect.iscoroutinefunction(getattr(type(feed), method)), method
    assert feed.phase == "" and feed.phase_counts is None
    assert all(hasattr(feed, name) for name in NativeFeed.__annotations__)
    assert feed.path_event == "cql_path"  # the event kind the stored runs and docs name


def test_a_loop_makes_its_feed_once_and_only_for_an_engine_with_a_core() -> None:
    eng = DriverLoop("a/0", "a", out=lambda line: None)
    try:
        assert eng.rust is None
        (without, *_) = with_capability(rust_core=False)
        assert eng._feed(without) is None and eng.rust is None
        (name, *_) = with_capability(rust_core=True)
        first = eng._feed(name)
        assert first is not None and eng._feed(name) is first
        assert eng._feed(without) is None and eng.rust is first  # kept for its engine
    finally:
        eng.loop.close()  # never started: no thread to stop
