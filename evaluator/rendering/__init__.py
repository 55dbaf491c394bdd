"""The evaluator's rendering room: tables, figures, markdown/HTML and the written documents,
from the numbers evaluator/reporting/ derives (docs/layering.md)."""
