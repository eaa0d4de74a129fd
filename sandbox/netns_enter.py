"""Run a piece of this process inside a host's network namespace (setns(2) on this thread).

nodetool talks JMX to 127.0.0.1:7199, which each cluster node keeps local to its own
namespace; a child started while this thread is inside the namespace runs there too.
Python 3.11 has no os.setns, so libc's is called through ctypes.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from contextlib import contextmanager

from loadtower.errors import LoadtowerError

CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise LoadtowerError(f"setns failed: {os.strerror(err)}")


@contextmanager
def inside(namespace: str) -> Iterator[None]:
    """This thread in /run/netns/NAMESPACE for the block, then back where it was."""
    try:
        target = os.open(f"/run/netns/{namespace}", os.O_RDONLY)
    except OSError as exc:
        raise LoadtowerError(f"network namespace {namespace} does not exist: {exc}") from exc
    here = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(here)
    finally:
        os.close(target)
        os.close(here)


def same_namespace(namespace: str) -> bool:
    """True when this thread already is in /run/netns/NAMESPACE."""
    try:
        a = os.stat(f"/run/netns/{namespace}")
    except OSError:
        return False
    b = os.stat("/proc/thread-self/ns/net")
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
