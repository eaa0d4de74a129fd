"""Import Locust the way the agent needs it: WITHOUT gevent monkey-patching.

The load engine runs on a native thread with asyncio and some drivers use their
own I/O threads; patching threading/socket would turn those into greenlets. Locust's
runners and its ZeroMQ transport (zmq.green) work with plain gevent APIs.
Import this module before anything imports ``locust``.
"""

from __future__ import annotations

import os

os.environ.setdefault("LOCUST_SKIP_MONKEY_PATCH", "1")

import gevent  # noqa: E402
from locust import User, constant, task  # noqa: E402
from locust.env import Environment  # noqa: E402
from locust.rpc import Message  # noqa: E402

__all__ = ["Environment", "Message", "User", "constant", "gevent", "task", "lane_user_class"]


def lane_user_class(engine_ref: dict) -> type[User]:
    """A Locust user that registers one lane with the process's engine and idles."""

    class LaneUser(User):
        wait_time = constant(0)
        _next_lane = 0

        @task
        def hold(self) -> None:
            engine = engine_ref["engine"]
            LaneUser._next_lane += 1
            lane = LaneUser._next_lane
            engine.add_lane(lane)
            try:
                while True:
                    gevent.sleep(1.0)
            finally:
                engine.remove_lane(lane)

    return LaneUser
