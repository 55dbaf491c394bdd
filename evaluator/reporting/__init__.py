"""Reports: derived blocks, metrics, statistics, export, rescue analyses."""
