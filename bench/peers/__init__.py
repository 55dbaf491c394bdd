"""Benchmarks against a peer implementation run in the same process on the same inputs."""
