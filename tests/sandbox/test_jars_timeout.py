"""A Maven fetch that hangs ends after the timeout with a clear error and no Maven left.

Real `mvn`, pointed (through its own settings) at a local "mirror" that accepts
connections and never answers: the way a stuck proxy looks to Maven. Nothing
leaves the machine and the real jar cache (~/.cache/loadtower, ~/.m2) is untouched.
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import psutil
import pytest

from loadtower.engines.cassandra.sandbox import jars
from loadtower.errors import LoadtowerError

SETTINGS = """<settings>
  <mirrors>
    <mirror>
      <id>blackhole</id>
      <mirrorOf>*</mirrorOf>
      <url>http://127.0.0.1:{port}/maven2</url>
    </mirror>
  </mirrors>
</settings>
"""


def _mentioning(text: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(text in part for part in proc.info["cmdline"] or []):
            found.append(proc)
    return found


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Maven (scripts/install.sh)")
def test_hanging_maven_is_killed_after_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".m2").mkdir(parents=True)
    with socket.socket() as blackhole:
        blackhole.bind(("127.0.0.1", 0))
        blackhole.listen(16)  # the kernel accepts; nobody ever reads or answers
        port = blackhole.getsockname()[1]
        (home / ".m2" / "settings.xml").write_text(SETTINGS.format(port=port))
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        monkeypatch.setenv("MAVEN_OPTS", f"-Duser.home={home}")
        with pytest.raises(LoadtowerError) as info:
            jars.fetch_jars(timeout=8)
    assert str(info.value).startswith(
        f"fetching cassandra-all {jars.CASSANDRA_VERSION} with Maven did not finish within "
        "8 s (is Maven Central reachable?"
    )
    assert not (jars.jars_dir() / jars.MARKER).exists()
    assert _mentioning(str(home)) == []
