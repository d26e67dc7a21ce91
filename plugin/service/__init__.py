"""``ls-agreement serve``: HTTP routes, webhook events, the monitored projects and their schedule.

:mod:`.app` is the app factory and its routes; :mod:`.projects` holds the service's projects, events and
threads, and runs each project's cycle (:mod:`plugin.keeper.cycle`) on its schedule and on events; :mod:`.status`
and :mod:`.metrics` show them (``/status``, and ``/metrics`` for Prometheus). It may import
every other part of :mod:`plugin` but the command line; nothing imports it but :mod:`plugin.cli`.
"""
