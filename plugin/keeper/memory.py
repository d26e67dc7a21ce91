"""How much memory an object graph holds: ``/status`` shows each project's state with it.

A walk of every object of a large state would take seconds under the
project's lock, so containers larger than ``4 * sample`` (a state's per-task
and per-item maps) are estimated from ``sample`` of their entries, spread
evenly over them, and scaled by their length. Objects reached twice are
counted once; classes, functions and modules are not counted.
"""

from __future__ import annotations

import gc
import sys
import types
from typing import Any

__all__ = ["deep_size", "freeze_startup_objects"]

_SKIPPED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def deep_size(root: Any, *, sample: int = 200) -> int:
    """Bytes held by an object and what it reaches, estimated.

    Large containers are estimated from a sample of ``sample`` of their entries.

    Parameters
    ----------
    root : object
    sample : int
        Entries walked of a container with more than ``4 * sample`` of them.

    Returns
    -------
    int
        ``sys.getsizeof`` summed over the objects reached (numpy arrays that
        own their data count it).

    Examples
    --------
    >>> deep_size([]) == sys.getsizeof([])
    True
    >>> big = {i: "x" * 100 + str(i) for i in range(100_000)}  # 100,000 distinct texts, estimated from 200
    >>> 0.9 < deep_size(big) / (sys.getsizeof(big) + sum(sys.getsizeof(k) + sys.getsizeof(v)
    ...                                                    for k, v in big.items())) < 1.1
    True
    """
    seen: set[int] = set()
    total = 0
    stack: list[tuple[Any, float]] = [(root, 1.0)]
    while stack:
        obj, weight = stack.pop()
        if id(obj) in seen or isinstance(obj, _SKIPPED):
            continue
        seen.add(id(obj))
        total += int(sys.getsizeof(obj) * weight)
        if isinstance(obj, dict):  # keys too: the collector's view of a dict with text keys leaves them out
            items = list(obj.items())
            step, scale = ((len(items) / sample, weight * len(items) / sample) if len(items) > 4 * sample
                           else (1, weight))
            for k in range(min(sample, len(items)) if len(items) > 4 * sample else len(items)):
                key, value = items[int(k * step)]
                stack.append((key, scale))
                stack.append((value, scale))
        elif isinstance(obj, (list, tuple, set, frozenset)) and len(obj) > 4 * sample:
            entries = list(obj)
            step = len(entries) / sample
            scale = weight * len(entries) / sample
            stack.extend((entries[int(k * step)], scale) for k in range(sample))
        else:
            stack.extend((child, weight) for child in gc.get_referents(obj))
    return total


def freeze_startup_objects() -> int:
    """Leave the objects alive now out of the garbage collector's passes.

    Leave every object alive now out of the cyclic garbage collector's passes (:func:`gc.freeze`); return how
    many objects that is.

    A command calls it once, when its modules are imported and before it reads
    tasks. A read parses pages of JSON, whose many containers set off full
    collections, and each full collection walks every tracked object: the
    imports alone (numpy, pandas, SciPy, pydantic, FastAPI, the SDK) hold about
    200,000, which made a collection cost about 0.1 s, about a page of tasks'
    mapping. Frozen objects are still freed when their last reference goes;
    only a cycle among them would never be collected, and what is alive at
    start lives as long as the process. What is garbage now is collected
    first.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
