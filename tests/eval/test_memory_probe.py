"""MemoryProbe on CPU: RSS growth when psutil is there, "n/a" without it, never on a remote engine."""
from __future__ import annotations

import builtins

import torch

from hymt.eval.memory_probe import MemoryProbe


def test_cpu_reports_rss_growth():
    probe = MemoryProbe(torch.device("cpu"))
    assert probe.kind == "cpu_rss_growth"
    probe.start()
    held = bytearray(64 * 1024 * 1024)
    held[::4096] = b"x" * len(held[::4096])  # touch every page so it is resident
    probe.sample()
    use = probe.finish(weights_bytes=123)
    assert use.kind == "cpu_rss_growth" and use.peak_bytes >= 48 * 1024 * 1024 and use.weights_bytes == 123
    del held


def test_without_psutil_or_device_nothing_is_measured(monkeypatch):
    real_import = builtins.__import__

    def no_psutil(name, *args, **kwargs):
        if name == "psutil":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_psutil)
    probe = MemoryProbe(torch.device("cpu"))
    probe.start()
    assert probe.finish(None).kind == "n/a" and probe.finish(None).peak_bytes is None
    assert MemoryProbe(None).kind == "n/a"
