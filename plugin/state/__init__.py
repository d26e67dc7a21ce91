"""A project's state and the scores it implies: no I/O, no client.

:mod:`.project` holds the project (:class:`~plugin.state.project.ProjectState`), :mod:`.tasks` its task index,
:mod:`.control` each control's rows as codes with their running sums, :mod:`.spans` the span measures of each task,
:mod:`.codes` the packing of rows into bytes, :mod:`.scoring` and :mod:`.flags` the scores and the one flag rule,
:mod:`.task_scores` every task's scores as columns, :mod:`.blocks` the block each task carries and the rule that
says when its meta must be written, :mod:`.references` ground truth and predictions against the annotators,
:mod:`.snapshot` what the report reads, and :mod:`.saved` the state on disk. It may import :mod:`agreement`,
:mod:`plugin.mapping` and :mod:`plugin.settings`; never the client, the keeper or the service.
"""
