"""One independent verifier per search route, each recomputing its pages from the frozen inputs with the
evaluator's own code (bound to its route in evaluator/verification/routes.py), in two folders by what a
page is: `lists/` for a ranking of passages by scores recomputed from the channels, `graphs/` for a walk
or an expansion over a graph. A family with several modules is a package in its folder. No family's
verifier imports another's (the `verifiers-independent` contract): what two share lives in
evaluator/verification/."""
