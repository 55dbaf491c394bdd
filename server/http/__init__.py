"""HTTP side of the lab: the Starlette app and the command line that starts it."""
