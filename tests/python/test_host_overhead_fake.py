#!/usr/bin/env python3
"""Host time per eager call of boo's Python hot paths, on the fake CUDA driver (no GPU): run with
BOO_CUDA_DRIVER_DIR pointing at tests/fake_cuda's library (ctest python.host_overhead_fake does).

Host tensors stand for device memory (the fake driver's memory is host memory): the launchable's GPU
path (Launchable._launch) runs on them as index -1 launched on the fake GPU 0, and boo.ops.conv's
direct path runs end to end with its memo's launcher on that path. Each is timed against an empty
PyTorch op (torch.ops.aten.alias, dispatcher and all) in the same process, so the bounds hold on any
machine's speed; they are generous (several times what was measured) and catch a hot path that starts
doing per-call work again (signature building, lookups, validation, allocations): the numbers are
printed for comparison with benchmarks/python_overhead.py on a GPU.

What this cannot time: torch.ops.boo.conv's C++ CUDA kernel (it needs CUDA tensors).
"""
import os
import sys
import time

import torch

import boo
from boo import ops

# Bounds, as multiples of the empty op's host time: about twice what a loaded 2-core machine measured
# (load 13: the bare launch 4.3-5.2x, the eager conv 7.9x, the eager conv recording a gradient through
# the Python registration's autograd.Function 13.6-14.8x; part of the launch is the fake driver's own).
BOUNDS = {"launchable": 10.0, "boo.ops.conv": 16.0, "boo.ops.conv, grad (autograd.Function)": 30.0}


def per_call_ns(fn, iters=2000, repeats=7):
    """The fastest of `repeats` loops of `iters` calls, per call: the least disturbed by other work."""
    for _ in range(200):
        fn()
    best = None
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for _ in range(iters):
            fn()
        took = (time.perf_counter_ns() - start) / iters
        best = took if best is None else min(best, took)
    return best


def main():
    if not os.environ.get("BOO_CUDA_DRIVER_DIR"):
        sys.exit("set BOO_CUDA_DRIVER_DIR to tests/fake_cuda's library folder (ctest python.host_overhead_fake does)")
    # benchmarks/python_overhead.py's convolution, on host memory.
    x = torch.randn(8, 64, 28, 28, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    w = torch.randn(64, 64, 3, 3, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    wg = w.detach().clone().requires_grad_()
    sig = ops.conv_signature(tuple(x.shape), tuple(w.shape), x.dtype, (1, 1), (1, 1), (1, 1), 1, False, "none",
                             ("NHWC", "NHWC", "NHWC"), "forward")
    launchable = boo.get_launchable(sig)

    def fake_launch(x, w, bias=None):  # the GPU path of launchable(x, w), on the fake GPU 0
        return launchable._launch((x, w), -1, 0, "cpu", 0)

    # conv()'s memo gets the fake launcher where it would make the GPU one (its first direct call).
    ops._conv_launcher = lambda x, w, bias, *params: lambda x, w, bias: fake_launch(x, w)[0]
    y = ops.conv(x, w, padding=1)
    assert y.shape == (8, 64, 28, 28) and y.stride() == (50176, 1, 1792, 64), (y.shape, y.stride())
    memo = next(iter(ops._CONV_CALLS.values()))
    assert memo.launcher, "conv()'s direct path did not keep its launcher"

    empty = per_call_ns(lambda: torch.ops.aten.alias.default(x))
    calls = {
        "launchable": lambda: fake_launch(x, w),
        "boo.ops.conv": lambda: ops.conv(x, w, padding=1),
        # What a call recording a gradient runs directly under the Python registration.
        "boo.ops.conv, grad (autograd.Function)": lambda: ops._ConvFunction.apply(x, wg, None, memo),
    }
    print(f"empty op (torch.ops.aten.alias): {empty / 1000:.2f} us per call")
    failed = []
    for name, fn in calls.items():
        took = per_call_ns(fn)
        ratio = took / empty
        print(f"{name:40s} {took / 1000:6.2f} us per call, {ratio:5.2f}x the empty op (bound {BOUNDS[name]}x)")
        if ratio > BOUNDS[name]:
            failed.append(name)
    if failed:
        sys.exit(f"host time per call beyond its bound: {', '.join(failed)}")
    print("ok")


if __name__ == "__main__":
    main()
