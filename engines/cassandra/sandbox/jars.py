"""Resolve the Cassandra server jars from Maven Central once and cache them.

The jars of ``org.apache.cassandra:cassandra-all`` and its runtime dependencies are
copied by Maven into ``~/.cache/loadtower/cassandra-<version>/lib``. A marker file
written last makes a half-finished fetch count as missing.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from loadtower.defaults import cache_dir
from loadtower.errors import LoadtowerError
from loadtower.sandbox.bounded_run import run_bounded

CASSANDRA_VERSION = "5.0.6"
MARKER = ".complete"
# about 66 MB from Maven Central: a minute on a good line, so 15 minutes means stuck
MVN_TIMEOUT_S = 900.0

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.loadtower</groupId>
  <artifactId>cassandra-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""


def jars_dir(version: str = CASSANDRA_VERSION) -> Path:
    return cache_dir() / f"cassandra-{version}" / "lib"


def have_jars(version: str = CASSANDRA_VERSION) -> bool:
    return (jars_dir(version) / MARKER).exists()


def fetch_jars(
    version: str = CASSANDRA_VERSION, quiet: bool = True, timeout: float = MVN_TIMEOUT_S
) -> Path:
    """Return the directory with the Cassandra jars, fetching them with Maven if needed."""
    lib = jars_dir(version)
    if (lib / MARKER).exists():
        return lib
    mvn = shutil.which("mvn")
    if mvn is None:
        raise LoadtowerError(
            "Maven ('mvn') is not installed: it is needed once to fetch the Cassandra jars "
            "(run scripts/install.sh, or apt-get install maven)"
        )
    work = lib.parent
    work.mkdir(parents=True, exist_ok=True)
    (work / "pom.xml").write_text(POM.format(version=version))
    if lib.exists():
        shutil.rmtree(lib)
    cmd = [
        mvn,
        "-B",
        "dependency:copy-dependencies",
        f"-DoutputDirectory={lib}",
        "-DincludeScope=runtime",
    ]
    if quiet:
        cmd.insert(1, "-q")
    try:
        code, out, err = run_bounded(cmd, work, quiet, timeout)
    except subprocess.TimeoutExpired:  # mvn and its JVM are killed; no marker is written
        raise LoadtowerError(
            f"fetching cassandra-all {version} with Maven did not finish within "
            f"{timeout:g} s (is Maven Central reachable? check the proxy settings "
            f"in ~/.m2/settings.xml); run `loadtower sandbox fetch` again to retry"
        ) from None
    if code != 0:
        tail = out[-2000:] + err[-2000:]
        raise LoadtowerError(f"fetching cassandra-all {version} with Maven failed:\n{tail}")
    if not any(lib.glob("cassandra-all-*.jar")):
        raise LoadtowerError(f"Maven finished but no cassandra-all jar is in {lib}")
    (lib / MARKER).write_text(version + "\n")
    return lib


def classpath(version: str = CASSANDRA_VERSION) -> str:
    lib = jars_dir(version)
    if not (lib / MARKER).exists():
        raise LoadtowerError(
            f"the Cassandra {version} jars are not fetched yet: run `loadtower sandbox fetch`"
        )
    return ":".join(str(p) for p in sorted(lib.glob("*.jar")))
