"""Which kernels a tensor gets: Triton on CUDA when it is installed, torch otherwise.

The same model code runs on CPU (tests, CI) and CUDA; only this choice differs. Set
HYMT_DISABLE_TRITON=1 to force the torch path on CUDA (debugging, comparisons).
"""
from __future__ import annotations

import functools
import os

import torch


@functools.lru_cache(maxsize=1)
def triton_available() -> bool:
    """True when `import triton` works (the GPU machine ships triton 3.6)."""
    try:
        import triton  # noqa: F401
        import triton.language  # noqa: F401
    except ImportError:
        return False
    return True


def use_triton(t: torch.Tensor) -> bool:
    """Whether the Triton kernels serve this tensor (CUDA, triton importable, not disabled)."""
    return t.is_cuda and triton_available() and os.environ.get("HYMT_DISABLE_TRITON", "0") != "1"


def next_pow2(n: int) -> int:
    """Smallest power of two >= n (Triton block shapes must be powers of two)."""
    return 1 << max(0, (n - 1).bit_length())
