"""Which processes this test run started, read from /proc (Linux), for the guard in tests/conftest.py."""

import os
from pathlib import Path


def descendants(root: int | None = None) -> dict[int, str]:
    """Every living descendant of ``root`` (default: this process): pid -> command line."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # it ended while we looked
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] == "Z":  # a zombie: ended, not yet reaped
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        commands[int(entry.name)] = command
    found, stack = {}, list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found[pid] = commands.get(pid, "")
        stack.extend(children.get(pid, []))
    return found
