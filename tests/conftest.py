"""Shared test settings: Hypothesis profiles sized for CI's two cores.

CI runs derandomized, so that a submission's result depends on its code alone; developers' runs keep exploring
new examples.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Scripts that record test data from a running Label Studio or a peer package; run by hand, never collected.
collect_ignore_glob = ["data/*.py"]
