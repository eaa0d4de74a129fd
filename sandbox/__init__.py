"""loadtower.sandbox: a local sandbox of real services to benchmark against."""

from loadtower.sandbox.sandbox import Sandbox

__all__ = ["Sandbox"]
