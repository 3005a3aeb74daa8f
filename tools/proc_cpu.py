#!/usr/bin/env python
"""CPU seconds (user + system) of a process and each of its descendants, one `pid name seconds`
line each: run before and after a load test to see which process saturates a core.

    python tools/proc_cpu.py PID
"""
from __future__ import annotations

import sys

import psutil


def main() -> int:
    root = psutil.Process(int(sys.argv[1]))
    for proc in [root, *root.children(recursive=True)]:
        times = proc.cpu_times()
        print(f"{proc.pid} {proc.name()} {times.user + times.system:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
