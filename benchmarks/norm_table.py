#!/usr/bin/env python3
"""The norm performance table (markdown): boo-driver's CSV over
benchmarks/norm_shapes.txt joined with benchmarks/torch_norms.py's CSV
(rows matched by norm_lines.py's key).

Bandwidth = bytes that must move / time (norm_lines.py: forward x read, y
written; backward dy and x read, dx written; parameters and statistics are
small and not counted), and its fraction of the measured device-to-device
copy bandwidth on the same tensor.

Run: python3 benchmarks/norm_table.py boo.csv torch.csv --device "NVIDIA H200" --title T
"""
import argparse
import csv

import norm_lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("boo_csv")
    ap.add_argument("torch_csv")
    ap.add_argument("--device", required=True)
    ap.add_argument("--title", required=True)
    args = ap.parse_args()
    torch_rows = {r["shape"]: r for r in csv.DictReader(open(args.torch_csv, newline=""))}
    out = [f"## {args.title}", "",
           f"Device: {args.device}. boo: per-launch GPU mean of boo-driver (CUPTI, inputs rotated past L2); cuDNN: "
           "its graph API norm (legacy batch norm calls where the graph API declines) in the same run; PyTorch: "
           "CUDA-event means, eager and torch.compile, same shapes, dtypes and layouts. Layer and RMS norm: bf16 "
           "with weight (and bias); batch norm: training forward with saved and running statistics, backward "
           "from the saved ones; group norm: 32 groups, weight and bias. Bandwidth = bytes that must move / "
           "time; 'of copy' = its fraction of a device-to-device copy of the same tensor.", "",
           "| op | direction | shape | layout | boo µs | boo TB/s | of copy | cuDNN µs | eager µs | compile µs | "
           "boo vs cuDNN | boo vs eager | boo vs compile |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in csv.DictReader(open(args.boo_csv, newline="")):
        cmd = r["arguments"]
        line = norm_lines.parse(cmd)
        if line is None or not r.get("boo mean") or r["boo mean"] in ("N.A.", "untimed"):
            out.append(f"| {cmd} | failed: {r.get('error', '')} |")
            continue
        boo_us = float(r["boo mean"])
        t = torch_rows.get(line.key, {})
        copy_tbs = float(t["copy_tbs"]) if t else float("nan")
        eager = float(t.get(f"{line.op}_{line.direction}_eager_us", "nan"))
        comp = float(t.get(f"{line.op}_{line.direction}_compile_us", "nan"))
        tbs = line.moved_bytes / boo_us / 1e6
        try:
            cudnn = float(r.get("cudnn mean", "nan"))
        except ValueError:
            cudnn = float("nan")  # cuDNN declined the signature ("N.A.")
        shape = "x".join(map(str, line.shape)) + (f" g{line.groups}" if line.groups else "")
        out.append(f"| {line.op} | {line.direction} | {shape} | {line.layout} {line.dtype} | {boo_us:.1f} | "
                   f"{tbs:.2f} | {tbs / copy_tbs:.0%} | {cudnn:.1f} | {eager:.1f} | {comp:.1f} | "
                   f"{cudnn / boo_us:.2f}x | {eager / boo_us:.2f}x | {comp / boo_us:.2f}x |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
