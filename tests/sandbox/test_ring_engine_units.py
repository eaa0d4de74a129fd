"""The sandbox's ring comes from the kinds (sandbox/ring_engine.py): the one kind that
names a ``sandbox_ring`` (Cassandra's) says how its nodes are configured and run; the
sandbox chooses their places (`NodePlace`) and names no engine itself."""

from __future__ import annotations

import stat
from dataclasses import replace
from pathlib import Path

import pytest

from loadtower.engines.cassandra.sandbox.node import NodeSpec, NodeTls
from loadtower.errors import LoadtowerError
from loadtower.protocol.engine_kinds import KINDS
from loadtower.sandbox import ring_engine as ring_module
from loadtower.sandbox.ring_engine import NodeCerts, NodePlace, RingEngine, ring_engine


def test_one_kind_names_the_ring_and_it_is_cassandras() -> None:
    assert [k.name for k in KINDS.values() if k.sandbox_ring] == ["cassandra"]
    ring = ring_engine()
    assert isinstance(ring, RingEngine)
    assert (ring.name, ring.title, ring.username) == ("cassandra", "Cassandra", "loadtower")
    assert ring.version == "5.0.6"


def test_none_or_two_rings_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    cassandra = KINDS["cassandra"]
    other = replace(cassandra, name="other", sandbox_ring="elsewhere:RING")
    for kinds, count in (({"redis": KINDS["redis"]}, 0),
                         ({"cassandra": cassandra, "other": other}, 2)):  # fmt: skip
        monkeypatch.setattr(ring_module, "KINDS", kinds)
        with pytest.raises(LoadtowerError, match=f"the registered engines name {count}$"):
            ring_engine()


def test_the_password_is_the_rings_own_file(tmp_path: Path) -> None:
    ring = ring_engine()
    path = ring.password_file(tmp_path)
    assert path == tmp_path / "secrets" / "cassandra.password"
    first = ring.password(tmp_path)
    assert first == ring.password(tmp_path) and len(first) >= 20
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_place_becomes_a_node_with_its_fields(tmp_path: Path) -> None:
    place = NodePlace(index=2, address="127.0.0.2", home=tmp_path / "node2", seed="127.0.0.1",
                      storage_port=7000, native_port=9042, jmx_port=7200, heap="2G")  # fmt: skip
    node = ring_engine().node(place)
    assert node == NodeSpec(index=2, address="127.0.0.2", home=tmp_path / "node2",
                            seed="127.0.0.1", storage_port=7000, native_port=9042,
                            jmx_port=7200, heap="2G")  # fmt: skip
    certs = NodeCerts(ca=tmp_path / "ca.pem", combined=tmp_path / "db2.pem")
    with_tls = ring_engine().node(replace(place, dc="dc2", rack="r1", tls=certs))
    assert isinstance(with_tls, NodeSpec) and (with_tls.dc, with_tls.rack) == ("dc2", "r1")
    assert with_tls.tls == NodeTls(ca=certs.ca, combined=certs.combined, internode="dc",
                                   client_auth=True)  # fmt: skip
    assert ring_engine().node_log(place.home) == tmp_path / "node2" / "logs" / "system.log"


def test_a_lean_place_runs_the_jits_quick_tier_only(tmp_path: Path) -> None:
    place = NodePlace(index=1, address="127.0.0.1", home=tmp_path / "node1", seed="127.0.0.1",
                      storage_port=7000, native_port=9042, jmx_port=7199)  # fmt: skip
    full = ring_engine().node(place).command()
    lean = ring_engine().node(replace(place, lean=True)).command()
    assert "-XX:TieredStopAtLevel=1" not in full
    assert "-XX:TieredStopAtLevel=1" in lean
    # the flag goes before the main class, where the JVM reads its options
    assert lean.index("-XX:TieredStopAtLevel=1") < lean.index("org.apache.cassandra.service.CassandraDaemon")
    assert [a for a in lean if a != "-XX:TieredStopAtLevel=1"] == full
