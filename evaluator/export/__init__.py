"""`lab export` and `lab example`: the public report, its pages, runs and qrels, from a private report."""
