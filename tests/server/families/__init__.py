"""Tests of the later method families' routes (ann, rescue, walk, prf, ppr, hipporag), one module each."""
