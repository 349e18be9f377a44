"""A long run's GPU memory stays flat (label gpu): 500 commands (25 distinct
signatures, each 20 times, through one executor) and the device memory in use
after each command, as the verbose driver prints it, must not grow once every
signature has run once.

Run as: python3 tests/python/test_memory_flat.py <boo-driver>
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

DISTINCT = [
    f"{op} -n {n} -c {c} -H 12 -W 12 -k {k} -y 3 -x 3 -p 1 -q 1 -F {f} -t 1 --iter 5"
    for op in ("conv", "convfp16", "convbfp16")
    for (n, c, k, f) in ((1, 8, 16, 1), (2, 16, 8, 2), (2, 8, 8, 4))
] + [
    f"convfp16 -n 4 -c {c} -H 28 -W 28 -k {k} -y 1 -x 1 -F 1 --in_layout NHWC --out_layout NHWC --fil_layout NHWC -t 1 --iter 5"
    for (c, k) in ((16, 32), (32, 16), (64, 64), (24, 40))
] + [
    f"layernorm{t} -X 64x{d} -o 1 -m 1 -F 1 -t 1 --iter 5"
    for t in ("", "fp16", "bfp16")
    for d in (96, 768, 1000, 4096)
]
REPEATS = 20
GROWTH_LIMIT_MIB = 8


def main():
    driver = sys.argv[1]
    assert len(DISTINCT) == 25, len(DISTINCT)
    lines = DISTINCT * REPEATS
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        (tmp / "cmds.txt").write_text("\n".join(lines) + "\n")
        env = dict(os.environ, BOO_CACHE_DIR=str(tmp / "cache"))
        r = subprocess.run([driver, "--commands-file", str(tmp / "cmds.txt"), "--backend", "boo", "--verbose"],
                           capture_output=True, text=True, env=env, timeout=1200)
    out = r.stdout
    assert r.returncode == 0, out[-4000:] + r.stderr
    assert f"{len(lines)} command(s): {len(lines)} ok" in out, out[-2000:]
    used = [int(m) for m in re.findall(r"device memory in use: (\d+) MiB", out)]
    assert len(used) == len(lines), f"{len(used)} memory reports for {len(lines)} commands"
    settled = used[len(DISTINCT)]  # every signature has run (and compiled) once
    peak = max(used[len(DISTINCT):])
    growth = peak - settled
    print(f"device memory in use: {used[0]} MiB after the first command, {settled} MiB after "
          f"{len(DISTINCT)}, peak {peak} MiB over {len(lines)} commands (growth {growth} MiB)")
    assert growth <= GROWTH_LIMIT_MIB, f"memory grew by {growth} MiB over {len(lines)} commands"


if __name__ == "__main__":
    main()
