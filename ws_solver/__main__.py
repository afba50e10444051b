"""`python -m ws_solver ...` runs the `ws-solver` command."""

import sys

from .cli import main

sys.exit(main())
