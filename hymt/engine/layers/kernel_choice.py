"""Which kernels a tensor gets: Triton on CUDA when it is installed, torch otherwise.

The same model code runs on CPU (tests, CI) and CUDA; only this choice differs.
`set_triton_disabled(True)` forces the torch path on CUDA (EngineConfig.disable_triton, for
debugging and comparisons); the native engine sets it while it is open.
`triton_interpreter_on_cpu()` runs the Triton kernels on CPU tensors through Triton's
interpreter, so tests check the kernels and their wiring without a GPU.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import sys
from collections.abc import Iterator

import torch

_cpu_interpreter = False
_triton_disabled = False


@functools.lru_cache(maxsize=1)
def triton_available() -> bool:
    """True when triton is installed (the GPU machine ships triton 3.6).

    Checked without importing it: triton reads TRITON_INTERPRET at import, so importing it
    early would pin the compiled mode before a test can choose the interpreter.
    """
    return importlib.util.find_spec("triton") is not None


def set_triton_disabled(disabled: bool) -> bool:
    """Route every tensor to the torch kernels (True) or let Triton serve CUDA (False).

    Process-wide, because the layers choose per tensor. Returns the previous setting, so the
    engine that set it can restore it when it closes.
    """
    global _triton_disabled
    previous, _triton_disabled = _triton_disabled, disabled
    return previous


def use_triton(t: torch.Tensor) -> bool:
    """Whether the Triton kernels serve this tensor (CUDA, triton importable, not disabled)."""
    if _triton_disabled or not triton_available():
        return False
    return t.is_cuda or (_cpu_interpreter and t.device.type == "cpu")


def next_pow2(n: int) -> int:
    """Smallest power of two >= n (Triton block shapes must be powers of two)."""
    return 1 << max(0, (n - 1).bit_length())


def triton_interpreter_unavailable() -> str | None:
    """Why triton_interpreter_on_cpu() cannot work in this process, or None when it can."""
    if not triton_available():
        return "triton is not installed (pip install triton==3.6.0)"
    if "triton" in sys.modules:
        # Triton's own helpers (tl.sum, tl.max, ...) were jitted at import, in one mode for good.
        from triton.language import standard
        from triton.runtime.interpreter import InterpretedFunction

        if not isinstance(standard.sum, InterpretedFunction):
            return "triton was imported before TRITON_INTERPRET=1 was set; set it at process start"
    return None


@contextlib.contextmanager
def triton_interpreter_on_cpu() -> Iterator[None]:
    """Within the block, CPU tensors take the Triton paths, run by Triton's interpreter.

    `triton.jit` picks interpreter or compiler when a function is defined, so TRITON_INTERPRET=1
    must be set before triton is first imported in the process; this sets it when it can.
    """
    reason = triton_interpreter_unavailable()
    if reason:
        raise RuntimeError(reason)
    os.environ["TRITON_INTERPRET"] = "1"
    _patch_interpreter_scalar_index()
    global _cpu_interpreter
    previous, _cpu_interpreter = _cpu_interpreter, True
    try:
        yield
    finally:
        _cpu_interpreter = previous


@functools.lru_cache(maxsize=1)
def _patch_interpreter_scalar_index() -> None:
    # Triton 3.6's interpreter turns a scalar into an int with int(array_of_shape_(1,)),
    # which numpy >= 2.4 rejects; runtime loop bounds (range(0, n)) then fail.
    import triton.runtime.interpreter as interp

    original = interp._patch_lang_tensor

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interp._patch_lang_tensor = patched
