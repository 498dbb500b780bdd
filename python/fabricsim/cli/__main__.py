"""`python -m fabricsim.cli`: the same as the `fabricsim` command."""

import sys

from . import main

sys.exit(main())
