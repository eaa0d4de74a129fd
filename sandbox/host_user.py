"""The cluster sandbox's non-root SSH user ``ltsandbox`` and its sudo rules.

The user is made with useradd (home /home/ltsandbox, its own group) and a password
field of ``*``: no password login, but not a *locked* account, which sshd refuses
without PAM (the cluster's sshds run with ``UsePAM no``). Its sudo rules live in
/etc/sudoers.d/loadtower-sandbox, checked with ``visudo -cf`` on a temporary file
before they replace it; ``remove`` kills the user's processes, runs ``userdel -r`` and
removes the rules.
"""

from __future__ import annotations

import os
import pwd
import re
import tempfile
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.sandbox import host_cgroup, netns

USER = "ltsandbox"
HOME = Path("/home") / USER
SUDOERS = Path("/etc/sudoers.d/loadtower-sandbox")
HEADER = "# loadtower cluster sandbox: removed by `loadtower sandbox down`\n"
# a sudoers word: these characters must be escaped in a command's arguments
_SPECIAL = re.compile(r"([\\,:=])")


def exists() -> bool:
    try:
        pwd.getpwnam(USER)
    except KeyError:
        return False
    return True


def uid() -> int | None:
    try:
        return pwd.getpwnam(USER).pw_uid
    except KeyError:
        return None


def ensure_user() -> None:
    """Create ``ltsandbox`` unless it exists. Idempotent."""
    if exists():
        return
    useradd = [netns.tool("useradd"), "--create-home", "--home-dir", str(HOME), "--user-group"]
    netns.run([*useradd, "--shell", "/bin/sh", "--password", "*", USER])


def command_rule(argv: list[str], user: str = USER) -> str:
    """A sudoers line letting ``user`` run exactly ``argv`` (absolute path, these
    arguments and no others) as root without a password."""
    if not argv or not argv[0].startswith("/"):
        raise LoadtowerError(f"a sudo rule needs a command with an absolute path, not {argv!r}")
    for arg in argv:
        if not arg or any(c.isspace() for c in arg):
            raise LoadtowerError(f"a sudo rule's argument cannot be empty or hold blanks: {arg!r}")
    words = " ".join(_SPECIAL.sub(r"\\\1", arg) for arg in argv)
    return f"{user} ALL=(root) NOPASSWD: {words}"


def sudoers_text(rules: list[str]) -> str:
    for rule in rules:
        if "\n" in rule or not rule.strip():
            raise LoadtowerError(f"a sudo rule must be one non-empty line: {rule!r}")
    return HEADER + "".join(f"{rule}\n" for rule in rules)


def validate(path: Path) -> None:
    """``visudo -cf``: one LoadtowerError line naming what is wrong."""
    argv = [netns.tool("visudo"), "-cf", str(path)]
    try:
        netns.run(argv)
    except LoadtowerError as exc:
        detail = str(exc).split(": ", 1)[-1]
        raise LoadtowerError(f"sudo rules for {USER} are invalid ({SUDOERS}): {detail}") from exc


def install_sudoers(rules: list[str]) -> None:
    """Check the rules with visudo on a temporary file, then install them (mode 0440).

    The temporary file lies in /etc/sudoers.d but its name holds a dot, which sudo
    skips, so half-written rules are never in force."""
    text = sudoers_text(rules)
    netns.tool("visudo")  # one clear line when sudo is not installed
    fd, tmp = tempfile.mkstemp(prefix=".loadtower-sandbox.", dir=SUDOERS.parent)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.chmod(tmp, 0o440)
        validate(Path(tmp))
        os.replace(tmp, SUDOERS)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def processes() -> set[int]:
    """Pids of every process whose real or effective uid is the user's."""
    user_id = uid()
    if user_id is None:
        return set()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        match = re.search(r"^Uid:\s+(\d+)\s+(\d+)", status, re.MULTILINE)
        if match and user_id in (int(match.group(1)), int(match.group(2))):
            found.add(int(entry.name))
    return found


def remove(timeout: float = 20.0) -> None:
    """Kill the user's processes, ``userdel -r``, remove the sudo rules. Idempotent."""
    if exists():
        host_cgroup.kill_all(processes(), timeout)
        netns.run([netns.tool("userdel"), "-r", USER], check=False)  # -r: home and mail
        if exists():
            netns.run([netns.tool("userdel"), "-f", "-r", USER])
    SUDOERS.unlink(missing_ok=True)
