"""``python -m quality``: see quality.cli."""

import sys

from quality.cli import main

sys.exit(main())
