"""evaluator stage of the lab (see docs/contracts.md), in layers (docs/layering.md), top to bottom:

- `campaign/`: running a campaign against a lab (process and client, prepare, snapshot, evaluate);
- `reporting/`: what is done with a report (derived blocks, metrics, statistics, export, audit,
  comparison, pooling);
- `verification/`: the independent recomputation of every page (one verifier per route);
- the campaign's documents every layer reads: `inputs` (the frozen inputs), `state` (the prepared
  lab's record map), `plan` (the pinned job order).
"""
