"""`lab judge`: an external run or loopback retriever judged against a finished campaign (docs/external.md)."""
