"""``python -m plugin`` runs ``ls-agreement``."""

import sys

from plugin.cli import main

sys.exit(main())
