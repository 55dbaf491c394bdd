"""The `lab` subcommands over reports (export, audit, compare, pool, example): argument
parsing and exit codes only, the work done in evaluator/rendering/ (docs/layering.md)."""
