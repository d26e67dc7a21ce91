"""The keeper of each project's scores in Label Studio: the project cycle, the passes, the writer.

:mod:`.cycle` is the project cycle (restore, read, score, diff, write, tabs, references, save) that ``sync`` runs
once (:mod:`.sync`) and ``serve`` on its schedule; :mod:`.passes` reads a project and refreshes tasks
(compute, diff, write: the one way scores reach Label Studio); :mod:`.monitor` holds one project's state behind
its lock; :mod:`.writer` refreshes requested tasks on a few threads; :mod:`.tabs` keeps the Data Manager's review
tabs; :mod:`.memory` measures what a state holds. It may import :mod:`plugin.state`, :mod:`plugin.mapping`,
:mod:`plugin.labelstudio` and :mod:`plugin.report`; never :mod:`plugin.service`.
"""
