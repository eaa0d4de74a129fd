"""The project's own error types. Anything a user can cause ends in one of these."""

from __future__ import annotations


class LoadtowerError(Exception):
    """An error with a one-line message meant for the user; exit code 2."""

    exit_code = 2


class ConfigError(LoadtowerError):
    """A bad inventory or scenario file: names the file, line and key."""

    def __init__(self, file: str, line: int | None, key: str | None, problem: str) -> None:
        self.file = file
        self.line = line
        self.key = key
        self.problem = problem
        where = file if line is None else f"{file}:{line}"
        what = f"key '{key}': " if key else ""
        super().__init__(f"{where}: {what}{problem}")


class NotYetAvailable(LoadtowerError):
    """A command whose implementation has not landed yet."""
