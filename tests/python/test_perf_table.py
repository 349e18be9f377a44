"""scripts/perf_table.py: the docs/perf table from a boo-driver CSV. The per-command
table's header row must sit directly above its separator row (markdown renders
nothing otherwise), the geometric means are per direction, a command without
both timings is listed, not dropped, and the L2 method is the one --l2 gives.

Run by ctest (label unit) as: python3 tests/python/test_perf_table.py
"""
import csv
import math
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIELDS = ["arguments", "boo mean", "cudnn mean", "flop_count", "min_bytes", "error"]
ROWS = [
    ["convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1 -F 1", "20", "10", "1e9", "1e6", ""],
    ["convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1 -F 1 -g 2", "10", "40", "1e9", "1e6", ""],
    ["convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 3 -x 3 -F 4", "30", "30", "1e9", "1e6", ""],
    ["convbfp16 -n 1 -c 3 -H 8 -W 8 -k 64 -y 3 -x 3 -F 2", "", "", "1e9", "1e6", "cudnn: UNSUPPORTED"],
]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "run.csv"
        with path.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(FIELDS)
            w.writerows(ROWS)
        table = [sys.executable, str(ROOT / "scripts/perf_table.py"), str(path), "--device", "test GPU",
                 "--peak-tflops", "1000", "--bandwidth-tbs", "4"]
        r = subprocess.run(table, capture_output=True, text=True)
        rotated = subprocess.run(table + ["--l2", "rotated"], capture_output=True, text=True)
        flushed = subprocess.run(table + ["--l2", "flushed"], capture_output=True, text=True)
    assert r.returncode == 0 and rotated.returncode == 0 and flushed.returncode == 0, r.stderr + flushed.stderr
    # What the table says about L2 is what the run did, as told by --l2: nothing claimed without it.
    assert "rotated" not in r.stdout and "not recorded" in r.stdout, r.stdout
    assert "inputs rotated over copies spanning twice the L2" in rotated.stdout, rotated.stdout
    assert "L2 overwritten before every timed launch" in flushed.stdout and "rotated" not in flushed.stdout
    lines = r.stdout.splitlines()
    header = [i for i, l in enumerate(lines) if l.startswith("| # | direction")]
    assert len(header) == 1, r.stdout
    assert lines[header[0] + 1] == "|---|---|---|---|---|---|---|---|---|", r.stdout
    assert sum(l.startswith("| ") and "`convbfp16" in l for l in lines) == 3, r.stdout
    # forward: ratios 2.0 and 0.25 -> geomean sqrt(0.5); weight: 1.0; all: (0.5)^(1/3).
    assert f"| forward | 2 | {math.sqrt(0.5):.2f} | 2.00 | 0.25 |" in lines, r.stdout
    assert "| backward weight | 1 | 1.00 | 1.00 | 1.00 |" in lines, r.stdout
    assert f"| all | 3 | {0.5 ** (1 / 3):.2f} | 2.00 | 0.25 |" in lines, r.stdout
    assert "Commands without both timings: 1" in r.stdout and "line 4:" in r.stdout, r.stdout
    # With the measured GEMM rate: cuDNN's TFLOP/s and both shares of that rate (line 1: 1e9 flop in 20 and
    # 10 us: 50 and 100 TFLOP/s, 10% and 20% of 500).
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "run.csv"
        with path.open("w", newline="") as f:
            csv.writer(f).writerows([FIELDS] + ROWS)
        g = subprocess.run(table[:2] + [str(path)] + table[3:] + ["--gemm-tflops", "500"], capture_output=True, text=True)
    assert g.returncode == 0, g.stderr
    glines = g.stdout.splitlines()
    gheader = [i for i, l in enumerate(glines) if l.startswith("| # | direction")]
    assert len(gheader) == 1 and "boo % of GEMM rate | cuDNN % of GEMM rate |" in glines[gheader[0]], g.stdout
    assert glines[gheader[0] + 1] == "|---" * 12 + "|", g.stdout
    assert any(l.startswith("| 1 | forward | 20.0 | 10.0 | 2.00 | 50.0 |") and "| 100.0 | 10% | 20% |" in l
               for l in glines), g.stdout
    assert "The GEMM rate is 500.0 TFLOP/s" in g.stdout, g.stdout
    print("perf_table: ok")


if __name__ == "__main__":
    main()
