"""Reports: derived blocks, metrics, statistics, export, the audit, comparison, pooling."""
