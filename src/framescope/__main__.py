"""``python -m framescope``: the same as the ``framescope`` command."""
import sys

from framescope.cli import main

sys.exit(main())
