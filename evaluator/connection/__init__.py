"""The lab as the evaluator reaches it: a server process it may start, an HTTP client, a resource monitor."""
