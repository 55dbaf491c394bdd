"""`lab audit`: a private report (and what was published from it) re-verified from the frozen inputs."""
