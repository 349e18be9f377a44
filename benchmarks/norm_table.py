#!/usr/bin/env python3
"""The norm performance table (markdown): boo-driver's CSV over
benchmarks/norm_shapes.txt joined with benchmarks/torch_norms.py's CSV.

Bandwidth = bytes that must move / time (forward: x read, y written; full
backward: dy and x read, dx written; parameters and statistics are small and
not counted), and its fraction of the measured device-to-device copy
bandwidth on the same shape.

Run: python3 benchmarks/norm_table.py boo.csv torch.csv --device "NVIDIA H200" --title T
"""
import argparse
import csv
import re


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("boo_csv")
    ap.add_argument("torch_csv")
    ap.add_argument("--device", required=True)
    ap.add_argument("--title", required=True)
    args = ap.parse_args()
    torch_rows = {r["shape"]: r for r in csv.DictReader(open(args.torch_csv, newline=""))}
    out = [f"## {args.title}", "",
           f"Device: {args.device}. boo: per-launch GPU mean of boo-driver (CUPTI, bf16, weight and, for layer norm, bias; inputs "
           "rotated past L2); cuDNN: its graph API norm in the same run; PyTorch: CUDA-event means, eager and torch.compile, same shapes. Bandwidth = bytes "
           "that must move / time; 'of copy' = its fraction of a device-to-device copy of the same tensor.", "",
           "| op | direction | shape | boo µs | boo TB/s | of copy | cuDNN µs | eager µs | compile µs | boo vs cuDNN | "
           "boo vs eager | boo vs compile |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in csv.DictReader(open(args.boo_csv, newline="")):
        cmd = r["arguments"]
        m = re.search(r"-X (\d+)x(\d+)", cmd)
        if not m or not r.get("boo mean") or r["boo mean"] in ("N.A.", "untimed"):
            out.append(f"| {cmd} | failed: {r.get('error', '')} |")
            continue
        rows, cols = int(m.group(1)), int(m.group(2))
        op = "rmsnorm" if cmd.startswith("t5") else "layernorm"
        backward = bool(re.search(r"-F (14|2)\b", cmd))
        direction = "bwd" if backward else "fwd"
        boo_us = float(r["boo mean"])
        moved = rows * cols * 2 * (3 if backward else 2)
        t = torch_rows.get(f"{rows}x{cols}", {})
        copy_tbs = float(t["copy_tbs"]) if t else float("nan")
        eager = float(t.get(f"{op}_{direction}_eager_us", "nan"))
        comp = float(t.get(f"{op}_{direction}_compile_us", "nan"))
        tbs = moved / boo_us / 1e6
        try:
            cudnn = float(r.get("cudnn mean", "nan"))
        except ValueError:
            cudnn = float("nan")  # cuDNN declined the signature ("N.A.")
        out.append(f"| {op} | {direction} | {rows}x{cols} | {boo_us:.1f} | {tbs:.2f} | {tbs / copy_tbs:.0%} | "
                   f"{cudnn:.1f} | {eager:.1f} | {comp:.1f} | {cudnn / boo_us:.2f}x | {eager / boo_us:.2f}x | "
                   f"{comp / boo_us:.2f}x |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
