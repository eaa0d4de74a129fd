"""The sandbox's MongoDB host without a running FerretDB: the build recipe as argv, its
one-line errors (no Go, too old a Go, an unreachable module proxy, a stuck build), the
service's command line and password file, the inventory's mongo1, the CLI."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from loadtower.engines.mongodb.sandbox import ferretdb
from loadtower.engines.mongodb.sandbox.service import SERVICE as mongo
from loadtower.errors import LoadtowerError
from loadtower.sandbox import Sandbox, engine_services
from loadtower.sandbox import state as st
from loadtower.sandbox.commands import add_arguments
from loadtower.sandbox.inventory_file import write
from loadtower.sandbox.state import NodeState, SandboxState
from loadtower.scenarios.loader import load_inventory
from tests.sandbox.engine_hosts import none_of_the_engines


def _state(tmp_path: Path, **ports: int) -> SandboxState:
    return SandboxState(
        nodes={1: NodeState(1, "127.0.0.1", 7199), 2: NodeState(2, "127.0.0.2", 7200, True)},
        ports={
            "native": 9042,
            "storage": 7000,
            "prometheus": 9090,
            "node_exporter": 9100,
            "ssh": 2222,
            **ports,
        },
        ssh={"user": "me", "key": str(tmp_path / "id"), "known_hosts": str(tmp_path / "kh")},
    )


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty loadtower cache (nothing built) for this test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "loadtower"


def fake_go(bin_dir: Path, version: str, then: str = "exit 0") -> None:
    """A `go` on PATH that reports ``version`` and runs ``then`` for any other command."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    go = bin_dir / "go"
    go.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = env ] && [ "$2" = GOVERSION ]; then echo {version}; exit 0; fi\n'
        f"{then}\n"
    )
    go.chmod(0o755)


# ---------------------------------------------------------------- the recipe
def test_the_recipe_steps_as_argv(tmp_path: Path) -> None:
    steps = ferretdb.fetch_steps("/opt/go/bin/go", tmp_path, "v1.24.2")
    assert [(s.argv, s.cwd) for s in steps] == [
        (["/opt/go/bin/go", "mod", "init", "loadtower.local/ferretdb-build"], tmp_path / "mod"),
        (
            ["/opt/go/bin/go", "get", "-tool", "github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2"],
            tmp_path / "mod",
        ),
        (
            ["/opt/go/bin/go", "list", "-m", "-f", "{{.Dir}}", "github.com/FerretDB/FerretDB"],
            tmp_path / "mod",
        ),
    ]
    build = ferretdb.build_step("/opt/go/bin/go", tmp_path)
    assert build.argv == ["/opt/go/bin/go", "build", "-o", str(tmp_path / "ferretdb"),
                          "./cmd/ferretdb"]  # fmt: skip
    assert build.cwd == tmp_path / "src"


def test_the_binary_is_cached_beside_the_cassandra_jars(cache: Path) -> None:
    from loadtower.engines.cassandra.sandbox.jars import jars_dir

    assert ferretdb.binary_path() == cache / "ferretdb-v1.24.2" / "ferretdb"
    assert ferretdb.binary_path().parent.parent == jars_dir().parent.parent
    assert not ferretdb.available()


def test_copied_source_is_writable_and_stamped_with_the_version(tmp_path: Path) -> None:
    """GOMODCACHE's files and folders are read-only; the copy gets version.txt."""
    module = tmp_path / "modcache" / "ferretdb@v1.24.2"
    (module / "cmd" / "ferretdb").mkdir(parents=True)
    (module / "build" / "version").mkdir(parents=True)
    (module / "cmd" / "ferretdb" / "main.go").write_text("package main\n")
    for path in sorted(module.rglob("*"), reverse=True) + [module]:
        path.chmod(0o444 if path.is_file() else 0o555)
    try:
        ferretdb._copy_source(module, tmp_path / "src", "v1.24.2")
        version = tmp_path / "src" / "build" / "version" / "version.txt"
        assert version.read_text() == "v1.24.2\n"
        main = tmp_path / "src" / "cmd" / "ferretdb" / "main.go"
        assert main.stat().st_mode & stat.S_IWUSR
        with pytest.raises(LoadtowerError, match="no cmd/ferretdb in"):
            ferretdb._copy_source(tmp_path / "src" / "build", tmp_path / "other", "v1.24.2")
    finally:
        ferretdb._make_writable(module)


def test_no_go_is_one_line_saying_how_to_install_it(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(ferretdb, "GO_FALLBACK", tmp_path / "no-go")
    with pytest.raises(LoadtowerError) as info:
        ferretdb.build()
    assert str(info.value).startswith("no `go` on PATH: FerretDB v1.24.2 is built with Go")
    assert "install Go 1.24 or newer" in str(info.value) and "\n" not in str(info.value)


def test_too_old_a_go_is_refused(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_go(tmp_path / "bin", "go1.19.8")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    go, why_not = ferretdb.usable_go()
    assert go is None
    assert why_not.startswith(f"{tmp_path / 'bin' / 'go'} is Go 1.19, too old to build FerretDB")


def test_a_stuck_build_is_killed_after_its_timeout(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `go` that never finishes (a proxy that does not answer): killed, one line, no
    binary and no scratch directory left in the cache."""
    fake_go(tmp_path / "bin", "go1.26.8", then="sleep 300")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    with pytest.raises(LoadtowerError) as info:
        ferretdb.build(timeout=1.5)
    assert str(info.value).startswith("building FerretDB did not finish within 1.5 s")
    assert "stuck at `go mod init`" in str(info.value)
    assert not ferretdb.available()
    assert list((cache / "ferretdb-v1.24.2").iterdir()) == []


def _go_has_get_tool() -> bool:
    """A local Go 1.24+ (`go get -tool`): the proxy test must not fetch a toolchain."""
    go = ferretdb.find_go()
    return go is not None and (ferretdb.go_version(go) or (0, 0)) >= (1, 24)


@pytest.mark.skipif(not _go_has_get_tool(), reason="no Go 1.24+ toolchain here")
def test_an_unreachable_module_proxy_is_one_line(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real go, an empty module cache, a proxy on a closed loopback port."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    monkeypatch.setenv("GOPROXY", f"http://127.0.0.1:{closed}")
    monkeypatch.setenv("GOMODCACHE", str(tmp_path / "modcache"))
    monkeypatch.setenv("GOTOOLCHAIN", "local")
    monkeypatch.setenv("GOFLAGS", "-modcacherw")
    with pytest.raises(LoadtowerError) as info:
        ferretdb.build(timeout=120)
    message = str(info.value)
    assert message.startswith(
        "building FerretDB: `go get -tool github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2` "
        f"could not reach the Go module proxy (GOPROXY=http://127.0.0.1:{closed})"
    )
    assert "\n" not in message
    assert list((cache / "ferretdb-v1.24.2").iterdir()) == []


# ---------------------------------------------------------------- the service
def test_the_service_command_line(tmp_path: Path) -> None:
    state = _state(tmp_path, mongodb=27018)
    argv = mongo.command(tmp_path, state)
    assert argv == [
        str(ferretdb.binary_path()),
        "--handler=sqlite",
        f"--sqlite-url=file:{tmp_path}/ferretdb/data/",
        "--listen-addr=127.0.0.1:27018",
        f"--state-dir={tmp_path}/ferretdb",
        "--telemetry=disable",
        "--debug-addr=-",
        "--test-enable-new-auth",
        "--setup-username=loadtower",
        "--setup-database=admin",
    ]
    assert (tmp_path / "ferretdb" / "data").is_dir()


def test_the_password_is_generated_once_in_a_0600_file_and_kept_off_the_argv(
    tmp_path: Path,
) -> None:
    env = mongo.environment(tmp_path)
    pwd_file = tmp_path / "secrets" / "mongodb.password"
    assert stat.S_IMODE(pwd_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(pwd_file.parent.stat().st_mode) == 0o700
    password = pwd_file.read_text().strip()
    assert env["FERRETDB_SETUP_PASSWORD"] == password and len(password) >= 16
    assert mongo.environment(tmp_path)["FERRETDB_SETUP_PASSWORD"] == password  # kept
    argv = mongo.command(tmp_path, _state(tmp_path, mongodb=27017))
    assert not any(password in arg for arg in argv)
    assert password not in mongo.url("127.0.0.1", 27017)


def test_ping_of_a_closed_port_is_false(tmp_path: Path) -> None:
    from loadtower.sandbox import processes as procs

    assert mongo.ping("127.0.0.1", procs.free_port(), timeout=0.5) is False


def test_the_inventory_has_mongo1_with_its_credentials_and_actions(tmp_path: Path) -> None:
    path = write(tmp_path, _state(tmp_path, mongodb=27018))
    assert "TIMINGS ARE FERRETDB'S, NOT MONGODB'S" in path.read_text()
    inventory, _ = load_inventory(path)
    assert set(inventory.with_role("db")) == {"db1", "mongo1"}
    mongo1 = inventory.hosts["mongo1"]
    assert (mongo1.engine, mongo1.address, mongo1.roles) == ("mongodb", "127.0.0.1", ["db"])
    assert mongo1.node_exporter == "127.0.0.1:9100"
    assert inventory.db_port("mongo1", "mongodb") == 27018
    creds = inventory.credentials("mongodb")
    assert creds.username == "loadtower"
    assert creds.password_file == str(tmp_path / "secrets" / "mongodb.password")
    assert set(mongo1.actions) == {"start", "stop", "kill", "restart", "status"}
    for action, command in mongo1.actions.items():
        assert command.startswith(sys.executable)
        assert command.endswith(f"sandbox mongodb {action} --dir {tmp_path}")


def test_no_mongo1_without_ferretdb(tmp_path: Path) -> None:
    inventory, _ = load_inventory(write(tmp_path, _state(tmp_path)))
    assert "mongo1" not in inventory.hosts


def test_actions_without_a_mongodb_host_say_how_to_get_one(tmp_path: Path, cache: Path) -> None:
    st.save(tmp_path, _state(tmp_path))
    with pytest.raises(LoadtowerError, match="has no MongoDB host .*--mongodb"):
        Sandbox(tmp_path).engine_action("mongodb", "start")
    info = Sandbox(tmp_path).info()["mongodb"]
    assert info["enabled"] is False and info["up"] is False
    assert info["reason"].startswith("FerretDB v1.24.2 is not built")
    assert info["reason"].endswith("the sandbox runs without MongoDB")


def test_mongodb_asked_for_but_not_built_is_one_line(tmp_path: Path, cache: Path) -> None:
    with pytest.raises(LoadtowerError) as info:
        engine_services.wanted(mongo, True)
    assert str(info.value).startswith("--mongodb: FerretDB v1.24.2 is not built")
    assert engine_services.wanted(mongo, None) is False  # default: only when built


def test_the_cli_takes_mongodb_flags_and_actions() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args(["up", "--no-mongodb"]).mongodb is False
    assert parser.parse_args(["up", "--mongodb"]).mongodb is True
    assert parser.parse_args(["up"]).mongodb is None
    args = parser.parse_args(["mongodb", "kill", "--dir", "x"])
    assert (args.action, args.engine_action, args.dir) == ("mongodb", "kill", Path("x"))
    with pytest.raises(SystemExit):
        parser.parse_args(["mongodb", "pause"])


def test_fetch_without_go_says_so_in_one_line_or_fails_when_required(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(ferretdb, "GO_FALLBACK", tmp_path / "no-go")
    mongo.fetch(require=False)
    out = capsys.readouterr().out.strip()
    assert out.startswith("no `go` on PATH") and out.endswith("the sandbox runs without MongoDB")
    assert "\n" not in out
    with pytest.raises(LoadtowerError, match=r"LOADTOWER_REQUIRE_MONGODB=1"):
        mongo.fetch(require=True)
    assert not os.path.exists(ferretdb.binary_path())


def test_no_mongodb_on_a_running_sandbox_stops_it_and_drops_mongo1(tmp_path: Path) -> None:
    """`up --no-mongodb` on a running sandbox stops its MongoDB host, leaves the rest
    running and writes the inventory without mongo1. The services are real (sleeping)
    processes recorded the way `up` records them."""
    from loadtower.sandbox import processes as procs
    from loadtower.sandbox import sandbox as sandbox_module

    def sleeper(name: str) -> procs.ProcessRecord:
        argv = [sys.executable, "-c", "import time; time.sleep(120)"]
        return procs.spawn(argv, tmp_path / "logs" / f"{name}.log")

    records: list[procs.ProcessRecord] = []
    try:
        state = _state(tmp_path, mongodb=procs.free_port())
        state.ports["native"] = procs.free_port()
        state.services = {name: sleeper(name) for name in sandbox_module.SERVICES}
        state.nodes[1].process = sleeper("node1")
        state.auth_ready = True
        state.services["mongodb"] = ferret = sleeper("mongodb")
        records += [r for r in state.services.values() if r] + [state.nodes[1].process]
        st.save(tmp_path, state)
        write(tmp_path, state)
        assert "mongo1" in load_inventory(tmp_path / "inventory.toml")[0].hosts
        info = Sandbox(tmp_path, engines=none_of_the_engines()).up(timeout=5)
        assert info["mongodb"]["enabled"] is False
        assert not procs.is_alive(ferret)
        assert all(procs.is_alive(r) for r in records if r is not ferret)
        inventory, _ = load_inventory(tmp_path / "inventory.toml")
        assert "mongo1" not in inventory.hosts and set(inventory.with_role("db")) == {"db1"}
        saved = st.load(tmp_path)
        assert saved is not None and "mongodb" not in saved.ports
    finally:
        for record in records:
            procs.stop(record, timeout=10)
