"""The numbers of a report: per-query metrics, paired statistics, pooling, the seal, verdicts, ranking."""
