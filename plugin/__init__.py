"""Everything that talks to Label Studio: reading projects, writing scores, serving events.

The statistics live in :mod:`agreement`, which knows nothing of Label Studio.
"""

__version__ = "0.1.0"
