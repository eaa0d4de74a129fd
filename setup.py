"""Maps the repository's top-level rooms onto the single `loadtower` import name."""

import runpy
from pathlib import Path

from setuptools import find_packages, setup

ROOMS = ("protocol", "tui", "agents", "scenarios", "orchestrator", "fleet", "store", "sandbox",
         "engines")

packages = ["loadtower"]
for room in ROOMS:
    packages += [f"loadtower.{p}" for p in find_packages(include=[room, f"{room}.*"])]

# The dependencies live in one place, loadtower/install_sets.py: the agent set (what a
# load host installs, as the `loadtower-agent` wheel) plus what the orchestrator adds.
SETS = runpy.run_path(str(Path(__file__).resolve().parent / "loadtower" / "install_sets.py"))

setup(
    packages=packages,
    package_dir={"loadtower": "loadtower", **{f"loadtower.{r}": r for r in ROOMS}},
    install_requires=list(SETS["FULL_REQUIRES"]),
    extras_require={name: list(reqs) for name, reqs in SETS["FULL_EXTRAS"].items()},
)
