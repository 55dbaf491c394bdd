"""`python -m lab` is the same command as the `lab` console script."""

import sys

from lab.cli import main

if __name__ == "__main__":
    sys.exit(main())
