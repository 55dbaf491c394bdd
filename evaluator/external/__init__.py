"""External methods: runs and loopback retrievers judged against a finished campaign (docs/external.md)."""
