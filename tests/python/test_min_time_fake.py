"""--min-time through boo's whole host path on the fake libcuda: launches are
sized by their duration for a command without --iter, and a command's own
--iter (or -i) is honoured.

Run by ctest (label nvrtc) with BOO_CUDA_DRIVER_DIR naming the fake driver, as:
python3 tests/python/test_min_time_fake.py <boo-driver>
"""
import pathlib
import re
import subprocess
import sys
import tempfile

CONV = "conv -n 1 -c 8 -H 8 -W 8 -k 8 -F 1"


def main():
    driver = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        commands = pathlib.Path(d) / "commands.txt"
        commands.write_text(f"{CONV}\n{CONV} --iter 7\n{CONV} -i 5\n")
        r = subprocess.run([driver, "--backend", "boo", "--min-time", "0.05", "--commands-file", str(commands)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        counts = [int(n) for n in re.findall(r"timed by .* over (\d+) launches", r.stdout)]
        assert len(counts) == 3, r.stdout
        sized, given, given_short = counts
        assert 3 <= sized <= 10000 and sized != 100, r.stdout  # not the default --iter 100
        assert (given, given_short) == (7, 5), r.stdout
    print("--min-time sizes launches and honours --iter")


if __name__ == "__main__":
    main()
