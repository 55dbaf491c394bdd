"""One independent verifier per search route, each recomputing its pages from the frozen inputs with the
evaluator's own code (bound to its route in evaluator/verification/routes.py)."""
