"""`python -m lab` is the same command as the `lab` console script.

`lab run` starts each stage this way with Ctrl-C ignored (lab/pipeline.py `_call`), so a Ctrl-C in the
stage's first instants cannot end the interpreter with a traceback: Ctrl-C is taken back here, first,
and one while the lab's modules load ends the stage as quietly as one later does.
"""

import signal
import sys

# A Ctrl-C while the lab's modules load is held until they have loaded, then ends the command: raised
# inside an import it could pass for a missing module, or make CPython end the process by SIGINT
# (ground/command.py `_no_place_to_stop` says why; it holds the same rule once a command runs).
held: list[int] = []
signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
try:
    from lab.cli import main

    signal.signal(signal.SIGINT, signal.default_int_handler)
    if held:
        raise KeyboardInterrupt
except KeyboardInterrupt:
    sys.exit(130)

if __name__ == "__main__":
    sys.exit(main())
