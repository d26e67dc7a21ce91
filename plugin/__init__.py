"""Everything that talks to Label Studio: reading projects, writing scores, serving events.

The statistics live in :mod:`agreement`, which knows nothing of Label Studio. The parts, from the bottom up:

* :mod:`plugin.settings`, :mod:`plugin.clock`: frozen options read once at the entry point, and the time;
* :mod:`plugin.mapping`: Label Studio's config and results into items with one label per annotator (no I/O);
* :mod:`plugin.state`: a project's state as codes and running sums, its scores, each task's block (no I/O);
* :mod:`plugin.labelstudio`: the client (the one place that calls Label Studio), exports, webhook events;
* :mod:`plugin.keeper`: the project cycle (read, score, diff, write, tabs, save) for ``sync`` and ``serve``;
* :mod:`plugin.report`: the admin report, drawn from a snapshot of the state;
* :mod:`plugin.service`: ``serve``'s HTTP routes, events and projects, calling the keeper;
* :mod:`plugin.cli`, :mod:`plugin.demo`, :mod:`plugin.summary`: the command, the demo and what they print.
"""

__version__ = "0.1.0"
