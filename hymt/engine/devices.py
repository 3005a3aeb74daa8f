"""Device resolution for every local backend: one default, one error for a bad name."""
from __future__ import annotations

import torch

from hymt.errors import InvalidInputError


def resolve_device(device: str | torch.device | None) -> torch.device:
    """`device` as a torch.device; None is CUDA when available, else CPU.

    A bare "cuda" gets the current device's index, so every part of an engine names the same GPU.
    """
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise InvalidInputError(f"device {device!r} is not a torch device (e.g. 'cuda', 'cuda:1', 'cpu')",
                                field="device") from e
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidInputError("device 'cuda' requested but CUDA is not available; use device='cpu'",
                                field="device")
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", torch.cuda.current_device())
    return dev
