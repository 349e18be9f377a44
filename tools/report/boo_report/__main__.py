"""`python3 tools/report/boo_report ARGS` (what `boo report` runs) or `python3 -m boo_report ARGS`."""
import os
import sys

if __package__ in (None, ""):
    # Run as a directory: its parent makes `boo_report` importable as a package.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    from boo_report.cli import main
else:
    from .cli import main

sys.exit(main())
