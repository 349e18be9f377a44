#!/usr/bin/env python3
"""PyTorch's SDPA as the attention baseline: times every SDPA backend PyTorch offers (flash, efficient,
cuDNN, math) on the ATen SDPA lines of a commands file, forward lines (aten::scaled_dot_product_attention and
the backends' _scaled_dot_product_*_attention) as the forward, backward lines
(_scaled_dot_product_*_attention_backward) as the gradients of q, k and v, and writes a CSV with each
backend's time and the fastest. Given boo-driver's CSV of the same file (--boo-csv), it prints the
markdown table of boo against PyTorch's fastest backend (boo / PyTorch: below 1 is boo faster).

Tensors take each line's shapes, strides and dtypes; causal, scale and enable_gqa its concrete inputs (a
backward line's grouped heads, as boo reads them, from the recorded shapes). Times are CUDA-event means
over --iter calls after warm-up (cuda_timing.py); a backend that declines a line is left empty.

Run: python3 benchmarks/torch_sdpa.py tests/gpu/aten_matrix.txt --out torch_sdpa.csv [--boo-csv boo.csv]
"""

import argparse
import ast
import csv
import shlex

# Where each form keeps q, k, v (or grad_out, q, k, v), causal, scale and enable_gqa (None: absent),
# as src/ops/aten/scaled_dot_product_attention.cpp reads them.
FORMS = {
    "aten::scaled_dot_product_attention": dict(backward=False, causal=5, scale=6, gqa=7),
    "aten::_scaled_dot_product_flash_attention": dict(backward=False, causal=4, scale=6, gqa=None),
    "aten::_scaled_dot_product_efficient_attention": dict(backward=False, causal=6, scale=7, gqa=None),
    "aten::_scaled_dot_product_cudnn_attention": dict(backward=False, causal=6, scale=8, gqa=None),
    "aten::_scaled_dot_product_flash_attention_backward": dict(backward=True, causal=11, scale=14, gqa=None),
    "aten::_scaled_dot_product_efficient_attention_backward": dict(backward=True, causal=11, scale=12, gqa=None),
    "aten::_scaled_dot_product_cudnn_attention_backward": dict(backward=True, causal=14, scale=15, gqa=None),
}

DTYPES = {"c10::BFloat16": "bfloat16", "c10::Half": "float16", "float": "float32", "double": "float64"}


class Line:
    """One SDPA line: its tensors (shape, strides, dtype name) and arguments."""

    def __init__(self, text):
        words = shlex.split(text)
        self.text, self.op = text, words[0]
        form = FORMS[self.op]
        shapes, dtypes, strides, values = (ast.literal_eval(w) for w in words[1:5])
        self.backward = form["backward"]
        first = 1 if self.backward else 0  # a backward line's q, k, v follow grad_out
        self.tensors = [(shapes[i], strides[i], DTYPES[dtypes[i]]) for i in range(first, first + 3)]

        def value(i):
            return values[i] if i is not None and i < len(values) and values[i] not in ("", "None") else None

        self.causal = value(form["causal"]) == "True"
        scale = value(form["scale"])
        self.scale = float(scale) if scale is not None else None
        heads, kv_heads = shapes[first][1], shapes[first + 1][1]
        self.gqa = value(form["gqa"]) == "True" if form["gqa"] is not None else heads != kv_heads


def sdpa_lines(path):
    out = []
    for raw in open(path):
        text = raw.strip()
        if text and not text.startswith("#") and text.split(" ", 1)[0] in FORMS:
            out.append(Line(text))
    return out


def time_line(line, iters):
    """{backend: µs} for the backends that run the line."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from cuda_timing import gpu_us

    q, k, v = (torch.empty_strided(shape, strides, dtype=getattr(torch, dtype), device="cuda").uniform_(-1, 1)
               for shape, strides, dtype in line.tensors)
    kwargs = dict(is_causal=line.causal, scale=line.scale)
    if line.gqa:
        kwargs["enable_gqa"] = True
    times = {}
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION,
                    SDPBackend.MATH):
        name = backend.name.lower()
        try:
            with sdpa_kernel(backend):
                if not line.backward:
                    with torch.no_grad():
                        times[name] = gpu_us(lambda: F.scaled_dot_product_attention(q, k, v, **kwargs), iters)
                    continue
                inputs = [t.detach().requires_grad_() for t in (q, k, v)]
                out = F.scaled_dot_product_attention(*inputs, **kwargs)
                dout = torch.empty_like(out).uniform_(-1, 1)
                times[name] = gpu_us(lambda: torch.autograd.grad(out, inputs, dout, retain_graph=True), iters)
        except RuntimeError as e:  # the backend declines these shapes, dtypes or strides
            print(f"note: {name} declines {line.op} {line.tensors[0][0]}: {str(e).splitlines()[0]}")
    return times


BACKENDS = ("flash_attention", "efficient_attention", "cudnn_attention", "math")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("commands")
    ap.add_argument("--out", required=True)
    ap.add_argument("--iter", type=int, default=100)
    ap.add_argument("--boo-csv", help="boo-driver's CSV of the same commands: print boo / PyTorch's fastest")
    args = ap.parse_args()
    rows = []
    for line in sdpa_lines(args.commands):
        times = time_line(line, args.iter)
        fastest = min(times, key=times.get) if times else ""
        rows.append(dict(command=line.text, direction="bwd" if line.backward else "fwd",
                         **{f"{b}_us": times.get(b, "") for b in BACKENDS},
                         fastest=fastest, fastest_us=times.get(fastest, "")))
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["command"])
        w.writeheader()
        w.writerows(rows)
    if not args.boo_csv:
        return
    boo = {r["arguments"]: r for r in csv.DictReader(open(args.boo_csv, newline=""))}
    print("| line | direction | boo µs | PyTorch fastest | PyTorch µs | boo / PyTorch |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        mean = boo.get(r["command"], {}).get("boo mean", "")
        try:
            boo_us = float(mean)
        except ValueError:
            print(f"| `{r['command']}` | {r['direction']} | {mean or 'missing'} | {r['fastest']} | {r['fastest_us']} | |")
            continue
        torch_us = r["fastest_us"]
        ratio = f"{boo_us / torch_us:.2f}" if torch_us != "" else ""
        shown = f"{torch_us:.1f}" if torch_us != "" else ""
        print(f"| `{r['command']}` | {r['direction']} | {boo_us:.1f} | {r['fastest']} | {shown} | {ratio} |")


if __name__ == "__main__":
    main()
