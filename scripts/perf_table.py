#!/usr/bin/env python3
"""Turns a boo-driver CSV (--backend boo --backend cudnn --csv-extra) into the performance
table of docs/perf/: per command the time of each backend, boo's TFLOP/s and
fraction of the roofline limit (tensor-core peak or memory bandwidth, whichever
bounds the shape), and the boo/cudnn time ratio; geometric means per direction.
With --gemm-tflops (a dense GEMM's measured rate on the device, e.g. 777 for bf16
on the H100), cuDNN's TFLOP/s and each backend's share of that rate too.

usage: perf_table.py OUT.csv [...] --device "NVIDIA H200" --peak-tflops 989.4 --bandwidth-tbs 4.8
                    [--gemm-tflops 777] [--l2 rotated|flushed] [--title T]

--l2 says how the run kept inputs out of L2 (the CSV does not record it): "rotated" for a run without
--flush-l2, "flushed" for one with it; without --l2 the table says it is not recorded.
"""
import argparse
import csv
import math
import re
import sys
from collections import defaultdict

DIRECTIONS = {"1": "forward", "2": "backward data", "4": "backward weight"}
L2_METHODS = {
    "rotated": "inputs rotated over copies spanning twice the L2 (at most 8 copies, so the smallest inputs can "
               "still be read from L2)",
    "flushed": "L2 overwritten before every timed launch (--flush-l2)",
    None: "how inputs were kept out of L2 is not recorded for this run",
}


def direction(command):
    m = re.search(r"(?:-F|--forw)\s+(\d+)", command)
    return DIRECTIONS.get(m.group(1) if m else "0", "F=" + (m.group(1) if m else "0"))


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--device", required=True)
    ap.add_argument("--peak-tflops", type=float, required=True, help="dense bf16 tensor-core peak")
    ap.add_argument("--bandwidth-tbs", type=float, required=True, help="HBM bandwidth")
    ap.add_argument("--gemm-tflops", type=float, help="a dense GEMM's measured rate (TFLOP/s) on the device")
    ap.add_argument("--l2", choices=["rotated", "flushed"], help="how the run kept inputs out of L2")
    ap.add_argument("--title", default="boo vs cuDNN")
    args = ap.parse_args()

    rows = []
    for path in args.csv:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if "flop_count" not in r:
                    sys.exit(f"perf_table.py: {path} has no flop_count column: was the run made with --csv-extra?")
                rows.append(r)
    out = [f"## {args.title}", "",
           f"Device: {args.device}; limits: {args.peak_tflops} TFLOP/s dense bf16, {args.bandwidth_tbs} TB/s HBM "
           "(spec sheet). Times are per-launch GPU means of boo-driver (CUPTI kernel times; "
           f"{L2_METHODS[args.l2]}), same process and inputs for both backends; cuDNN runs its fastest "
           "engine configuration for each signature.", "",
           "| # | direction | boo µs | cuDNN µs | boo/cuDNN | boo TFLOP/s | bound | boo % of limit |"
           + (" cuDNN TFLOP/s | boo % of GEMM rate | cuDNN % of GEMM rate |" if args.gemm_tflops else "")
           + " command |",
           "|---|---|---|---|---|---|---|---|" + ("---|---|---|" if args.gemm_tflops else "") + "---|"]
    if args.gemm_tflops:
        out[2] += f" The GEMM rate is {args.gemm_tflops} TFLOP/s, a dense GEMM measured on the device."
    ratios = defaultdict(list)
    failures = []
    worst = []
    for i, r in enumerate(rows, 1):
        cmd = r["arguments"]
        try:
            boo, cudnn = float(r["boo mean"]), float(r["cudnn mean"])
        except (KeyError, ValueError):
            failures.append((i, cmd, r.get("error", "")))
            continue
        flops, nbytes = float(r["flop_count"]), float(r["min_bytes"])
        t_compute = flops / (args.peak_tflops * 1e12)
        t_memory = nbytes / (args.bandwidth_tbs * 1e12)
        bound = "compute" if t_compute >= t_memory else "memory"
        limit_fraction = max(t_compute, t_memory) / (boo * 1e-6)
        ratio = boo / cudnn
        d = direction(cmd)
        ratios[d].append(ratio)
        worst.append((ratio, i, cmd))
        rate = {name: flops / (t * 1e-6) / 1e12 for name, t in (("boo", boo), ("cudnn", cudnn))}
        gemm = (f" {rate['cudnn']:.1f} | {100 * rate['boo'] / args.gemm_tflops:.0f}% | "
                f"{100 * rate['cudnn'] / args.gemm_tflops:.0f}% |") if args.gemm_tflops else ""
        out.append(f"| {i} | {d} | {boo:.1f} | {cudnn:.1f} | {ratio:.2f} | {rate['boo']:.1f} | "
                   f"{bound} | {100 * limit_fraction:.0f}% |{gemm} `{cmd}` |")
    summary = ["| direction | commands | geomean boo/cuDNN | max | min |", "|---|---|---|---|---|"]
    for d, v in sorted(ratios.items()):
        summary.append(f"| {d} | {len(v)} | {geomean(v):.2f} | {max(v):.2f} | {min(v):.2f} |")
    allr = [x for v in ratios.values() for x in v]
    summary.append(f"| all | {len(allr)} | {geomean(allr):.2f} | {max(allr) if allr else 0:.2f} | "
                   f"{min(allr) if allr else 0:.2f} |")
    if failures:
        summary += ["", f"Commands without both timings: {len(failures)}"]
        summary += [f"- line {i}: `{c}`: {e}" for i, c, e in failures[:20]]
    worst.sort(reverse=True)
    summary += ["", "Slowest relative to cuDNN:"] + [f"- {x:.2f}x line {i}: `{c}`" for x, i, c in worst[:10]]
    # The summary goes between the preamble and the per-command table (its header and separator row).
    text = "\n".join(out[:4] + summary + [""] + out[4:]) + "\n"
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
