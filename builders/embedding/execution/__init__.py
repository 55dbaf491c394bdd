"""How a fixture is encoded: batches, worker processes, a Dask cluster, threads, kept batches and what it cost."""
