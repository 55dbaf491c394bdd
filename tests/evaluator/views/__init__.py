"""Tests of the evaluator's views: the public page, its tables, prose and the example campaign."""
