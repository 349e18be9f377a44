"""Executor isolation: a command that crashes its process or hangs is
reported, the executor is restarted, and every other command still runs and
gets its CSV row, timed and with its numerics verdict. CPU version (label unit); with --backend boo the same file
exercises a GPU kernel that faults (illegal address) and one that hangs (label gpu).

Run as: python3 tests/python/test_executor.py <boo-driver> [boo]
"""
import csv
import os
import pathlib
import subprocess
import sys
import tempfile
import time

GOOD = [
    "conv -n 1 -c 2 -H 5 -W 5 -k 3 -y 3 -x 3 -p 1 -q 1 -F 1 -t 1 --iter 3",
    "bootest_ok -n 4096 -t 1 --iter 3",
    "layernorm -X 4x33 -o 1 -m 1 -F 14 -t 1 --iter 3",
    "convbfp16 -n 2 -c 8 -H 6 -W 6 -k 8 -y 1 -x 1 -F 4 -t 1 --iter 3",
]
FAULT = "bootest_fault -n 4096"
HANG = "bootest_hang -n 4096"


def main():
    driver = sys.argv[1]
    backend = sys.argv[2] if len(sys.argv) > 2 else "cpu"
    lines = [GOOD[0], FAULT, GOOD[1], HANG, GOOD[2], FAULT, GOOD[3]]
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        (tmp / "cmds.txt").write_text("\n".join(lines) + "\n")
        env = dict(os.environ, BOO_ENABLE_TEST_OPS="1", BOO_CACHE_DIR=str(tmp / "cache"))
        start = time.time()
        r = subprocess.run([driver, "--commands-file", str(tmp / "cmds.txt"), "--backend", backend,
                            "--command-timeout", "20", "--csv", str(tmp / "out.csv"), "--csv-extra", "--verbose", "--verify-numerics"],
                           capture_output=True, text=True, env=env, timeout=600)
        elapsed = time.time() - start
        out = r.stdout
        assert r.returncode == 1, out + r.stderr
        assert "7 command(s): 4 ok, 3 failed, 0 unsupported" in out, out
        assert out.count("timed out after 20 s") == 1, out
        died = "executor process died" if backend == "cpu" else "ILLEGAL_ADDRESS"
        assert out.count(died) >= 2 or (backend != "cpu" and "illegal" in out.lower()), out
        assert out.count("\nNumerics: PASS") == len(GOOD), out  # every good line timed and verified
        assert elapsed < 120, f"a hang must cost the timeout, not the run ({elapsed:.0f} s)"
        rows = list(csv.reader((tmp / "out.csv").open(newline="")))
        assert len(rows) == 1 + len(lines), rows
        by_command = {row[0]: row for row in rows[1:]}
        for good in GOOD:
            row = by_command[good]
            assert row[-1] == "" and float(row[3]) > 0, row
        assert "timed out" in by_command[HANG][-1], by_command[HANG]
    print(f"executor isolation holds on {backend} ({elapsed:.1f} s)")


if __name__ == "__main__":
    main()
