"""Maps the repository's top-level rooms onto the single `loadtower` import name."""

from setuptools import find_packages, setup

ROOMS = ("protocol", "tui", "agents", "scenarios", "store", "sandbox")

packages = ["loadtower"]
for room in ROOMS:
    packages += [f"loadtower.{p}" for p in find_packages(include=[room, f"{room}.*"])]

setup(
    packages=packages,
    package_dir={"loadtower": "loadtower", **{f"loadtower.{r}": r for r in ROOMS}},
)
