#!/usr/bin/env python3
"""boo from PyTorch, end to end: the README's Python example as a program.

Runs on the GPU when there is one (boo's kernels), else on the CPU (boo's
float64 reference: exact and slow, so the shapes here are small). Each step
checks its result against PyTorch and prints the largest difference.

Run: python3 examples/python_example.py [cpu|cuda]
"""
import copy
import sys

import torch
import torch.nn.functional as F

import boo


def report(what, got, torch_got, exact):
    """Prints boo's and PyTorch's largest error against a float64 computation of the same inputs.
    boo must stay within a few roundings of the result's dtype, or within twice PyTorch's error:
    in half precision a ReLU input that rounds to the other side of zero moves a gradient a long
    way, for PyTorch as much as for boo."""
    exact = exact.detach().double()
    err = (got.double() - exact).abs().max().item()
    torch_err = (torch_got.double() - exact).abs().max().item()
    scale = exact.abs().max().item()
    print(f"{what:46s} max error vs float64: boo {err:.2e}, PyTorch {torch_err:.2e} (values up to {scale:.2e})")
    rtol = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 3e-2}[got.dtype]
    assert err <= max(rtol * max(scale, 1.0), 2 * torch_err), f"{what}: boo is less accurate than PyTorch"


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: SKIPPED")  # exit code 77: ctest reports the run as skipped, not passed
        sys.exit(77)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    torch.manual_seed(0)
    print(f"boo {boo.__version__} on {device}, {dtype}")

    # A signature from a driver command, its seeded inputs, and its launchable.
    sig = boo.Signature.from_command("convbfp16 -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -p 1 -q 1 -F 1 "
                                     "--in_layout NHWC --fil_layout NHWC --out_layout NHWC")
    x, w = sig.sample_args(device=device)
    (y,) = boo.get_launchable(sig)(x, w)  # on the current CUDA stream, zero-copy
    report(f"launchable {sig.func_name[:28]}...", y, F.conv2d(x, w, padding=1),
           F.conv2d(x.double(), w.double(), padding=1))

    # Functional ops with autograd: the backward runs boo's backward kernels.
    x = torch.randn(2, 16, 12, 12, device=device, dtype=dtype).to(memory_format=torch.channels_last)
    x.requires_grad_()
    w = (torch.randn(32, 16, 3, 3, device=device, dtype=dtype) / 12).requires_grad_()
    b = torch.randn(32, device=device, dtype=dtype, requires_grad=True)
    y = boo.ops.conv(x, w, b, padding=1, activation="relu")
    ref = F.relu(F.conv2d(x, w, b, padding=1))
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
    exact = F.relu(F.conv2d(x64, w64, b64, padding=1))
    report("boo.ops.conv + bias + relu", y, ref, exact)
    dy = torch.randn_like(y)
    for name, got, want, grad64 in zip(("dx", "dw", "db"), torch.autograd.grad(y, (x, w, b), dy),
                                       torch.autograd.grad(ref, (x, w, b), dy),
                                       torch.autograd.grad(exact, (x64, w64, b64), dy.double())):
        report(f"  its gradient {name}", got, want, grad64)
    h = torch.randn(4, 10, 64, device=device, dtype=dtype)
    gamma, beta = torch.randn(64, device=device, dtype=dtype), torch.randn(64, device=device, dtype=dtype)
    h64, gamma64, beta64 = h.double(), gamma.double(), beta.double()
    report("boo.ops.layer_norm", boo.ops.layer_norm(h, (64,), gamma, beta), F.layer_norm(h, (64,), gamma, beta),
           F.layer_norm(h64, (64,), gamma64, beta64))
    report("boo.ops.rms_norm", boo.ops.rms_norm(h, (64,), gamma), F.rms_norm(h, (64,), gamma),
           F.rms_norm(h64, (64,), gamma64))

    # Drop-in modules: swap them into an existing model (parameters are shared).
    model = torch.nn.Sequential(torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(32, 8, 1)).to(device=device, dtype=dtype)
    model64 = copy.deepcopy(model).double()
    x = torch.randn(2, 16, 12, 12, device=device, dtype=dtype)
    with torch.no_grad():
        want, exact = model(x), model64(x.double())
        boo.replace_modules(model)
        report("replace_modules: Sequential(conv, relu, conv)", model(x), want, exact)

    # torch.compile: convs (+ bias + activation) and norms become boo ops, the rest runs eagerly
    # (backend="boo_inductor" hands the rest to inductor instead).
    compiled = torch.compile(model, backend="boo")
    with torch.no_grad():
        report("torch.compile(backend='boo')", compiled(x), want, exact)
    print("ok")


if __name__ == "__main__":
    main()
