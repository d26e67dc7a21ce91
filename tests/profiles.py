"""Hypothesis profiles, one per tier's budget, and the count of examples a test asks for scaled to the profile.

A test that needs more or fewer examples than the profile's default says how many at the standard scale, through
:func:`examples`: ``@settings(max_examples=examples(60), deadline=None)``. A plain ``max_examples=60`` would hold
in every profile, so the unit tier could not run fewer nor ``make test`` more.

``HYPOTHESIS_PROFILE`` picks the profile (``make test-fast`` sets ``fast``, ``make test`` sets ``thorough``; a bare
``pytest`` run gets ``dev``). With ``CI`` set, every profile runs derandomized, so that a submission's result
depends on its code alone; developers' runs keep exploring new examples. ``ci`` is ``thorough`` derandomized, to
run locally what CI runs.
"""

import os

from hypothesis import HealthCheck, settings

# A test's own count is its count at scale 1, where a test without one gets STANDARD examples.
STANDARD = 60
# Examples a test gets without a count of its own; a test's own count is scaled by the same ratio to STANDARD.
PROFILES = {
    "fast": 15,  # make test-fast: the unit tier in under three minutes on two cores
    "dev": 30,  # a bare pytest run
    "thorough": 60,  # make test, and CI: as many as CI has always run, four times the unit tier
}
# A test's own count is never scaled below this, or below the count itself where that is lower.
FLOOR = 5


def register() -> str:
    """Register the profiles and load the one ``HYPOTHESIS_PROFILE`` names; returns its name."""
    derandomize = bool(os.environ.get("CI"))
    for name, default in PROFILES.items():
        settings.register_profile(name, max_examples=default, deadline=None, derandomize=derandomize,
                                  suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("ci", parent=settings.get_profile("thorough"), derandomize=True)
    name = os.environ.get("HYPOTHESIS_PROFILE", "dev")
    settings.load_profile(name)
    return name


def examples(count: int) -> int:
    """``count`` examples at the standard scale, scaled to the loaded profile (at least FLOOR, or ``count`` if less).

    >>> examples(STANDARD) == settings.default.max_examples
    True
    >>> examples(3) >= 3
    True
    """
    scaled = round(count * settings.default.max_examples / STANDARD)
    return max(scaled, min(count, FLOOR))
