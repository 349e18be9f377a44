#!/usr/bin/env python3
"""Times PyTorch's norms (eager and torch.compile) and a device-to-device copy on the shapes of
benchmarks/norm_shapes.txt, on the GPU, and writes a CSV: the baselines boo's norm kernels are measured
against (scripts/gpu-check.sh norms joins it with boo-driver's CSV through benchmarks/norm_table.py).

Layer norm and RMS norm: bf16 rows x cols with weight (and bias); one row per shape with both ops'
columns. Batch norm (F.batch_norm in training mode, momentum 0.1, float32 weight and bias as
bnormbfp16's) and group norm (F.group_norm, weight and bias of the data type): one row per line's key
(norm_lines.py), x in the line's layout (channels_last for NHWC/NDHWC). Times are CUDA-event means over
--iter launches after warm-up; the backward computes dx and the parameters' gradients.

Run: python3 benchmarks/torch_norms.py --out torch_norms.csv [--iter 100]
"""

import argparse
import csv

import torch
import torch.nn.functional as F

import norm_lines
from cuda_timing import gpu_us


def time_forward_backward(row, name, fn, x, params, dy, iters):
    """Columns {name}_fwd_{eager,compile}_us and {name}_bwd_{eager,compile}_us of fn(x) (params: the
    tensors whose gradients the backward computes besides x's)."""
    compiled = torch.compile(fn, dynamic=False)
    with torch.no_grad():
        row[f"{name}_fwd_eager_us"] = gpu_us(lambda: fn(x), iters)
        row[f"{name}_fwd_compile_us"] = gpu_us(lambda: compiled(x), iters)
    for kind, f in (("eager", fn), ("compile", compiled)):
        xg = x.detach().requires_grad_()
        out = f(xg)
        row[f"{name}_bwd_{kind}_us"] = gpu_us(
            lambda: torch.autograd.grad(out, (xg, *params), dy, retain_graph=True), iters)


def with_copy(key, x, iters):
    """A row keyed `key` with the copy time and bandwidth of x's bytes."""
    y = torch.empty_like(x)
    copy_us = gpu_us(lambda: y.copy_(x), iters)
    return {"shape": key, "copy_us": copy_us, "copy_tbs": 2 * x.numel() * x.element_size() / copy_us / 1e6}


def row_norms(rows, cols, dev, iters):
    x = torch.randn(rows, cols, device=dev, dtype=torch.bfloat16)
    # Parameters that take gradients: the backward is the full one (dx, dweight, dbias), as boo's -F 14.
    w = torch.randn(cols, device=dev, dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(cols, device=dev, dtype=torch.bfloat16, requires_grad=True)
    row = with_copy(f"{rows}x{cols}", x, iters)
    dy = torch.randn_like(x)
    time_forward_backward(row, "layernorm", lambda t: F.layer_norm(t, (cols,), w, b), x, (w, b), dy, iters)
    time_forward_backward(row, "rmsnorm", lambda t: F.rms_norm(t, (cols,), w), x, (w,), dy, iters)
    return row


def channel_norm(line, dev, iters):
    """Batch norm or group norm on x shaped and laid out as the line's."""
    dtype = getattr(torch, line.dtype)
    x = torch.randn(*line.shape, device=dev, dtype=dtype)
    if line.layout.endswith("C"):
        x = x.contiguous(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
    c = line.shape[1]
    row = with_copy(line.key, x, iters)
    dy = torch.randn_like(x)
    if line.op == "batchnorm":
        pdtype = torch.float32 if line.grad_bytes == line.data_bytes else dtype  # bnormbfp16 vs bnormbfp16fp32
        w = torch.randn(c, device=dev, dtype=pdtype, requires_grad=True)
        b = torch.randn(c, device=dev, dtype=pdtype, requires_grad=True)
        rm = torch.zeros(c, device=dev, dtype=torch.float32)
        rv = torch.ones(c, device=dev, dtype=torch.float32)
        fn = lambda t: F.batch_norm(t, rm, rv, w, b, training=True, momentum=0.1, eps=1e-3)  # noqa: E731
    else:
        w = torch.randn(c, device=dev, dtype=dtype, requires_grad=True)
        b = torch.randn(c, device=dev, dtype=dtype, requires_grad=True)
        fn = lambda t: F.group_norm(t, line.groups, w, b)  # noqa: E731
    time_forward_backward(row, line.op, fn, x, (w, b), dy, iters)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="benchmarks/norm_shapes.txt")
    ap.add_argument("--out", required=True)
    ap.add_argument("--iter", type=int, default=100)
    args = ap.parse_args()
    dev = torch.device("cuda")
    rows, seen = [], set()
    for text in open(args.shapes):
        line = norm_lines.parse(text)
        if line is None or line.key in seen:
            continue
        seen.add(line.key)
        row = row_norms(*line.shape, dev, args.iter) if line.layout == "rows" else channel_norm(line, dev, args.iter)
        rows.append(row)
        print(row, flush=True)
    fields = list(dict.fromkeys(k for row in rows for k in row))
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
