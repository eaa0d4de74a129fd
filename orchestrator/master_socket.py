"""The Locust master's ZeroMQ socket, with a bound on what it holds from each worker
(issue 28: bounded memory in the master).

ZeroMQ queues what a peer sends, per peer, up to the socket's receive high-water mark
(RCVHWM, 1,000 messages by default) before it stops reading that peer's connection. When
the orchestrator reads slower than the workers send, the master waits for room in its
output (master_output.py) and stops taking messages, so every worker's queue in the
master fills: at 1,024 workers of 23 KB lines, up to 23 GB (bench/fleet.py saw the
master reach 1.1 GB). With RECEIVE_HWM messages per worker, the master holds at most
RECEIVE_HWM x workers x a message; past that the backlog stays with the workers (their
own send queue, then their sends fail) and each line waits in the worker's spool, which
the run reads (agent_guard.py: the periodic read of what did not arrive live, and the
final read): late in the live view, never lost in the store.

ZeroMQ copies a socket's options into a listener when it binds, so the bound must be set
between the socket's creation and its bind, which Locust's `Server.__init__` does in one
go: `bounded_server_class` is Locust's server with the option set in between. The
master process installs it (`install`) before its runner makes the server.
"""

from __future__ import annotations

from typing import Any

# messages queued per worker in the master: a second or two of a worker's lines and
# events, with its heartbeats among them
RECEIVE_HWM = 32


def bounded_server_class(receive_hwm: int = RECEIVE_HWM) -> type:
    """Locust's rpc Server whose socket takes at most `receive_hwm` messages per peer."""
    # deferred: locust and zmq.green (gevent) are loaded only by the master process
    import zmq.error as zmqerr
    import zmq.green as zmq
    from locust.exception import RPCError
    from locust.rpc import zmqrpc

    class BoundedServer(zmqrpc.Server):
        loadtower_bounded = True

        def __init__(self, host: str, port: int) -> None:
            zmqrpc.BaseSocket.__init__(self, zmq.ROUTER, self.ipv4_only(host, port))
            self.socket.setsockopt(zmq.RCVHWM, receive_hwm)
            # as Locust's Server.__init__ binds
            if port == 0:
                self.port = self.socket.bind_to_random_port(f"tcp://{host}")
            else:
                try:
                    self.socket.bind(f"tcp://{host}:{port}")
                    self.port = port
                except zmqerr.ZMQError as exc:
                    raise RPCError(f"Socket bind failure: {exc}") from exc

    return BoundedServer


def install(receive_hwm: int = RECEIVE_HWM) -> Any:
    """Make Locust's runners create the bounded server (in this process: the master's);
    returns the class installed."""
    from locust.rpc import zmqrpc

    if not getattr(zmqrpc.Server, "loadtower_bounded", False):
        setattr(zmqrpc, "Server", bounded_server_class(receive_hwm))  # noqa: B010  # Locust's own class, replaced
    return zmqrpc.Server
