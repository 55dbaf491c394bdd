"""Tests of the evaluator's numbers: metrics, statistics, pooling, query clusters and the report's blocks."""
