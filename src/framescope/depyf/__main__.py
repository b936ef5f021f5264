"""``python -m framescope.depyf install|uninstall|status``: see :mod:`framescope.depyf.shim`."""
import sys

from framescope.depyf.shim import main

sys.exit(main())
