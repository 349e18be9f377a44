"""Runs boo-driver with the given arguments where there is a GPU, and exits with its status. Without one
(`boo info` says the boo backend is unavailable: no CUDA driver, or a driver with no device) it exits 77,
ctest's SKIP_RETURN_CODE, so the run reads "skipped"; where a GPU is expected (BOO_REQUIRE_GPU=1, as
scripts/gpu-check.sh sets) its absence is a failure.

Run by ctest as: python3 tests/python/driver_gpu_or_skip.py <boo> <boo-driver> [driver arguments...]
"""
import os
import re
import subprocess
import sys


def main():
    boo, driver, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    info = subprocess.run([boo, "info"], capture_output=True, text=True)
    unavailable = re.search(r"^\s*boo: unavailable \((.*)\)$", info.stdout, re.MULTILINE)
    if unavailable:
        if os.environ.get("BOO_REQUIRE_GPU") == "1":
            sys.exit(f"no usable GPU ({unavailable.group(1)}), and BOO_REQUIRE_GPU=1 requires one: FAILED")
        print(f"no usable GPU ({unavailable.group(1)}): SKIPPED")
        sys.exit(77)
    sys.exit(subprocess.run([driver, *args]).returncode)


if __name__ == "__main__":
    main()
