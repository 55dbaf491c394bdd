"""The families whose page walks or expands a graph (graph, walk, ppr, hipporag2, linearrag)."""
