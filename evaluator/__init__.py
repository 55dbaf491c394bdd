"""evaluator stage of the lab (see docs/contracts.md), by verb, in layers (docs/layering.md), top to bottom:

- one package per command, holding its command and its work: `leaderboard/`, `judge/`, `compare/`,
  `pool/`, `audit/`, `export/`, `evaluate/`, `prepare/`;
- `views/`: tables, figures and pages, drawn from the numbers below;
- `derived/`: the private report and the blocks derived from its rows; `numbers/`: metrics,
  statistics, pooling, the seal, verdicts and the leaderboard's ranking;
- `verification/`: the independent recomputation of every page (one verifier per route);
- `connection/`: the lab as a process and an HTTP client;
- the campaign's documents every layer reads: `inputs` (the frozen inputs), `state` (the prepared
  lab's record map), `plan` (the pinned job order), and `relations` (the entity graph recomputed).
"""
