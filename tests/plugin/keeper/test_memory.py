"""plugin.keeper.memory: the estimate ``/status`` shows of a project state's memory."""

import gc
import sys
import tracemalloc

import numpy as np

from plugin.demo import CONFIG, simulated_export
from plugin.keeper.memory import deep_size
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState


def test_small_graphs_are_counted_exactly_and_once():
    shared = "a label" * 10
    array = np.zeros(1000)
    graph = {"a": [shared, shared], "b": (array, array)}
    expected = sum(sys.getsizeof(o) for o in (graph, "a", "b", graph["a"], shared, graph["b"], array))
    assert deep_size(graph) == expected  # the array's 8,000 bytes of data counted once, the string once


def test_a_project_state_is_estimated_from_samples_within_a_tenth_of_what_it_allocates():
    tasks = simulated_export(3000, seed=3)
    controls = parse_label_config(CONFIG)
    gc.collect()
    tracemalloc.start()
    try:
        state = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions())
        del tasks
        gc.collect()
        allocated = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    exact = deep_size(state, sample=10**9)
    estimate = deep_size(state, sample=100)
    assert abs(estimate - exact) < 0.1 * exact
    assert 0.8 * allocated < exact < 1.25 * allocated  # what the walk reaches is what building the state allocated


def test_startup_objects_are_frozen_once_collected():
    # in a process of its own: freezing is for the whole process
    import subprocess

    program = ("import gc; import plugin.state.project; from plugin.keeper.memory import freeze_startup_objects; "
               "cycle = []; cycle.append(cycle); del cycle; "  # garbage now: collected, not frozen
               "before = len(gc.get_objects()); frozen = freeze_startup_objects(); "
               "print(frozen, before, len(gc.get_objects()), gc.get_freeze_count())")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True)
    frozen, before, after, count = (int(word) for word in done.stdout.split())
    assert frozen == count > 50_000 and after == 0 and frozen < before
