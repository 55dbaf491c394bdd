"""`python -m lab` is the same command as the `lab` console script.

`lab run` starts each stage this way with Ctrl-C ignored (lab/pipeline.py `_call`), so a Ctrl-C in the
stage's first instants cannot end the interpreter with a traceback: the default handling comes back
here, first, and a Ctrl-C while the lab's modules load ends the stage as quietly as one later does.
"""

import signal
import sys

signal.signal(signal.SIGINT, signal.default_int_handler)
try:
    from lab.cli import main
except KeyboardInterrupt:
    sys.exit(130)

if __name__ == "__main__":
    sys.exit(main())
