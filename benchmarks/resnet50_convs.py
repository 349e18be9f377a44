#!/usr/bin/env python3
"""One ResNet-50 training step's convolution time from the driver's CSV of benchmarks/resnet50_convs.txt:
each line's mean kernel time weighed by how often its shape occurs (the "# xN" lines), per direction and in
all, for boo and the vendor, and the lines where boo loses the most time.

Run: boo-driver --backend boo --backend cudnn --commands-file benchmarks/resnet50_convs.txt --csv r.csv
     python3 benchmarks/resnet50_convs.py r.csv [benchmarks/resnet50_convs.txt]
"""
import csv
import re
import sys


def weights(commands_file):
    """{command: occurrences per step} from the "# xN" lines before each block of commands."""
    out, count = {}, 1
    for line in open(commands_file):
        line = line.strip()
        if m := re.match(r"# x(\d+)$", line):
            count = int(m.group(1))
        elif line and not line.startswith("#"):
            out[line] = count
    return out


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    counts = weights(sys.argv[2] if len(sys.argv) > 2 else "benchmarks/resnet50_convs.txt")
    totals, losses = {}, []
    for r in rows:
        n = counts.get(r["arguments"].strip())
        try:
            boo, vendor = float(r["boo mean"]), float(r["cudnn mean"])
        except (KeyError, ValueError):
            print(f"no times for: {r['arguments']}", file=sys.stderr)
            continue
        if n is None:
            print(f"not in the commands file: {r['arguments']}", file=sys.stderr)
            continue
        direction = re.search(r" -F (\d)", r["arguments"]).group(1)
        for key in (direction, "all"):
            t = totals.setdefault(key, [0.0, 0.0])
            t[0] += n * boo
            t[1] += n * vendor
        losses.append((n * (boo - vendor), n, boo, vendor, r["arguments"].split(" --in_layout")[0]))
    names = {"1": "forward", "2": "backward data", "4": "backward weight", "all": "all"}
    for key in ("1", "2", "4", "all"):
        if key in totals:
            b, v = totals[key]
            print(f"{names[key]:16s} boo {b / 1e3:7.2f} ms  cudnn {v / 1e3:7.2f} ms  boo/cudnn {b / v:.3f}")
    print("largest losses (count x (boo - cudnn) us):")
    for loss, n, b, v, command in sorted(losses, reverse=True)[:12]:
        print(f"  {loss:8.1f}  x{n} {b:8.1f} vs {v:8.1f}  {command}")


if __name__ == "__main__":
    main()
