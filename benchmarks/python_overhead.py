#!/usr/bin/env python3
"""Host overhead of one eager boo call beyond its kernel, on the GPU.

For a small convolution and an inference batch norm (kernels of a few microseconds), times N calls
back to back with the CPU clock (the loop is host-bound when the host work
per call exceeds the kernel) and the kernel's GPU time (CUDA events around
launches queued ahead). Reports, per call: the host time of boo.ops.conv (boo
directly, with and without a gradient to record), of torch.ops.boo.conv (the op compiled graphs call),
of the bare boo launchable and of torch.nn.functional.conv2d, and the part
beyond the kernel; the same for boo.ops.batch_norm and torch.ops.boo.batch_norm against
torch.nn.functional.batch_norm (eval: from the running statistics).

Run: python3 benchmarks/python_overhead.py [--iter 2000]
"""
import argparse
import time

import torch
import torch.nn.functional as F

import boo
from cuda_timing import gpu_us


def host_us(fn, iters):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / iters * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iter", type=int, default=2000)
    args = ap.parse_args()
    x = torch.randn(8, 64, 28, 28, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    w = torch.randn(64, 64, 3, 3, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    wg = w.detach().clone().requires_grad_()  # a training step's weight: its calls record the backward
    sig = boo.Signature.from_command("convbfp16 -n 8 -c 64 -H 28 -W 28 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 "
                                     "--in_layout NHWC --fil_layout NHWC --out_layout NHWC")
    launchable = boo.get_launchable(sig)
    calls = {
        "boo.ops.conv": lambda: boo.ops.conv(x, w, padding=1),  # nothing requires grad: the direct path
        "boo.ops.conv, grad": lambda: boo.ops.conv(x, wg, padding=1),  # direct, recording the op's backward
        "torch.ops.boo.conv": lambda: torch.ops.boo.conv.default(x, w, None, [1, 1], [1, 1], [1, 1], 1, "none",
                                                                 "NHWC,NHWC,NHWC"),  # what compiled graphs call
        "boo launchable": lambda: launchable(x, w),
        "torch conv2d": lambda: F.conv2d(x, w, padding=1),
        "torch conv2d, grad": lambda: F.conv2d(x, wg, padding=1),
    }
    kernel = gpu_us(lambda: launchable(x, w), 200)  # 200 calls: queued within the timer's head start
    print(f"torch.ops.boo registration: {boo.ops.registration} (BOO_TORCH_LIBRARY=0: the Python one)")
    print(f"conv kernel (GPU time per launch, queued ahead): {kernel:.2f} us")
    for name, fn in calls.items():
        host = host_us(fn, args.iter)
        print(f"{name:20s} host time per call {host:6.2f} us; beyond the kernel {max(host - kernel, 0):6.2f} us")

    # Batch norm in eval (what an inference graph runs where it is not folded into a conv).
    gamma, beta, mean = (torch.randn(64, device="cuda") for _ in range(3))
    var = torch.rand(64, device="cuda") + 0.5
    bn_sig = boo.ops.batch_norm_signature(tuple(x.shape), x.dtype, "NHWC", "inference", True, 1e-5)
    bn_launchable = boo.get_launchable(bn_sig)
    by_name = {"x": x, "scale": gamma.view(1, 64, 1, 1), "bias": beta.view(1, 64, 1, 1),
               "estimated_mean": mean.view(1, 64, 1, 1), "estimated_variance": var.view(1, 64, 1, 1)}
    bn_args = [by_name[spec.name] for spec in bn_launchable.arguments]
    bn_calls = {
        "boo.ops.batch_norm": lambda: boo.ops.batch_norm(x, gamma, beta, mean, var),
        "torch.ops.boo.batch_norm": lambda: torch.ops.boo.batch_norm.default(x, gamma, beta, mean, var, False, 0.1,
                                                                             1e-5),
        "boo launchable (bn)": lambda: bn_launchable(*bn_args),
        "torch batch_norm": lambda: F.batch_norm(x, mean, var, gamma, beta),
    }
    kernel = gpu_us(lambda: bn_launchable(*bn_args), 200)
    print(f"batch norm kernel (GPU time per launch, queued ahead): {kernel:.2f} us")
    for name, fn in bn_calls.items():
        host = host_us(fn, args.iter)
        print(f"{name:24s} host time per call {host:6.2f} us; beyond the kernel {max(host - kernel, 0):6.2f} us")


if __name__ == "__main__":
    main()
