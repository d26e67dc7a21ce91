"""Which processes this test run started, read from /proc (Linux), for the guard in tests/conftest.py."""

import os
from pathlib import Path


def descendants(root: int | None = None) -> dict[int, str]:
    """Every living descendant of ``root`` (default: this process): pid -> command line."""
    root = os.getpid() if root is None else root
    if _childless(root):  # the common case around a test, without a look at every process
        return {}
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended while we looked
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] == "Z":  # a zombie: ended, not yet reaped
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    # The command lines of the descendants alone: the guard runs this around every test, and most processes on the
    # machine are no descendants.
    found, stack = {}, list(children.get(root, []))
    while stack:
        pid = stack.pop()
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # it ended while we looked
            continue
        found[pid] = command
        stack.extend(children.get(pid, []))
    return found


def _childless(pid: int) -> bool:
    """Whether ``pid`` has no child at all, from its threads' ``children`` lists (False where the kernel keeps none:
    then :func:`descendants` looks at every process)."""
    try:
        lists = [(task / "children").read_text() for task in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:  # no such process, or a thread ended while we looked, or no children lists on this kernel
        return False
    return bool(lists) and not any(text.strip() for text in lists)
