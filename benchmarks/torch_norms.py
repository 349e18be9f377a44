#!/usr/bin/env python3
"""Times PyTorch's layer_norm / rms_norm (eager and torch.compile) and a
device-to-device copy on the norm shapes of benchmarks/norm_shapes.txt, on
the GPU, and writes a CSV: the baselines boo's norm kernels are measured
against (scripts/gpu-check.sh norms joins it with boo-driver's CSV).

Times are CUDA-event means over --iter launches after warm-up, inputs the same
as boo-driver's shapes (bf16, weight and bias). Bytes that must move: forward
reads x and writes y; full backward reads dy and x and writes dx.

Run: python3 benchmarks/torch_norms.py --out torch_norms.csv [--iter 100]
"""
import argparse
import csv
import re

import torch
import torch.nn.functional as F

from cuda_timing import gpu_us


def shapes(path):
    seen = []
    for line in open(path):
        m = re.search(r"-X (\d+)x(\d+)", line)
        if m and not line.lstrip().startswith("#"):
            shape = (int(m.group(1)), int(m.group(2)))
            if shape not in seen:
                seen.append(shape)
    return seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="benchmarks/norm_shapes.txt")
    ap.add_argument("--out", required=True)
    ap.add_argument("--iter", type=int, default=100)
    args = ap.parse_args()
    dev = torch.device("cuda")
    rows = []
    for r, c in shapes(args.shapes):
        x = torch.randn(r, c, device=dev, dtype=torch.bfloat16)
        # Parameters that take gradients: the backward is the full one (dx, dweight, dbias), as boo's -F 14.
        w = torch.randn(c, device=dev, dtype=torch.bfloat16, requires_grad=True)
        b = torch.randn(c, device=dev, dtype=torch.bfloat16, requires_grad=True)
        dy = torch.randn_like(x)
        y = torch.empty_like(x)
        copy_us = gpu_us(lambda: y.copy_(x), args.iter)
        elem = x.numel() * x.element_size()
        row = {"shape": f"{r}x{c}", "copy_us": copy_us, "copy_tbs": 2 * elem / copy_us / 1e6}
        fns = {
            "layernorm": (lambda t: F.layer_norm(t, (c,), w, b), (w, b)),
            "rmsnorm": (lambda t: F.rms_norm(t, (c,), w), (w,)),
        }
        for name, (fn, params) in fns.items():
            compiled = torch.compile(fn, dynamic=False)
            with torch.no_grad():
                row[f"{name}_fwd_eager_us"] = gpu_us(lambda: fn(x), args.iter)
                row[f"{name}_fwd_compile_us"] = gpu_us(lambda: compiled(x), args.iter)
            for kind, f in (("eager", fn), ("compile", compiled)):
                xg = x.detach().requires_grad_()
                out = f(xg)
                row[f"{name}_bwd_{kind}_us"] = gpu_us(
                    lambda: torch.autograd.grad(out, (xg, *params), dy, retain_graph=True), args.iter)
        rows.append(row)
        print(row, flush=True)
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
