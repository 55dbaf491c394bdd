"""The verifiers of families whose page walks or expands a graph (typed paths, the seeded walk, PPR,
HippoRAG 2, LinearRAG): each builds its own graph from the frozen relations and fixture."""
