"""boo-driver's precompile stage through the whole host path on the fake libcuda:
a commands file's kernels (boo's, the GPU input generator's, the float64 GPU
reference's) are compiled before the first command, so the commands load every
module from the cache and compile none; --compile-jobs 0 turns the stage off
(the commands compile), as do --dry-run and a command given on the command line.

Run by ctest (label nvrtc) with BOO_CUDA_DRIVER_DIR naming the fake driver, as:
python3 tests/python/test_precompile_fake.py <boo-driver>
"""
import pathlib
import re
import subprocess
import sys
import tempfile

LINES = [
    "conv -n 1 -c 8 -H 8 -W 8 -k 8 -F 1 -t 0",
    "conv -n 1 -c 8 -H 8 -W 8 -k 8 -F 2 -t 0",
    "conv -n 1 -c 8 -H 8 -W 8 -k 8 -F 1 -t 0",  # the same kernels again
    "layernorm -X 4x64 -o 1 -F 1 -t 0",
]
PRECOMPILE = re.compile(r"; precompile \d+\.\d s on (\d+) threads \((\d+) modules: (\d+) compiled, (\d+) cached, (\d+) failed\)")


def run(driver, args):
    r = subprocess.run([driver, *args], capture_output=True, text=True)
    return r.stdout + r.stderr


def kernel_counts(out):
    """(compiled, loaded_from_cache, reused_in_process) summed over the executors' summaries."""
    found = re.findall(r"kernels compiled=(\d+) \(.*?\) loaded_from_cache=(\d+) \(.*?\) reused_in_process=(\d+)", out)
    assert found, out
    return tuple(sum(int(f[i]) for f in found) for i in range(3))


def main():
    driver = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        commands = tmp / "commands.txt"
        commands.write_text("\n".join(LINES) + "\n")
        base = ["--backend", "boo", "--commands-file", str(commands)]

        for name, extra in [("isolated", []), ("in_process", ["--no-isolation"]),
                            ("numerics", ["--verify-numerics", "--reference", "gpu", "--numerics-vendor", "none"])]:
            out = run(driver, base + extra + ["--cache-dir", str(tmp / name), "--compile-jobs", "3"])
            m = PRECOMPILE.search(out)
            assert m, out
            threads, modules, compiled, cached, failed = map(int, m.groups())
            assert threads == 3 and failed == 0 and cached == 0, out
            # Three distinct boo kernels, at least one input generator, and for numerics the reference's.
            assert compiled == modules >= (6 if name == "numerics" else 4), out
            # Every command loads its modules from the cache (or this process's module map).
            built, loaded, _ = kernel_counts(out)
            assert built == 0 and loaded >= 4, (name, out)
            assert "4 command(s)" in out, out

        # The stage off: the commands compile their own kernels.
        out = run(driver, base + ["--cache-dir", str(tmp / "off"), "--compile-jobs", "0"])
        assert "precompile" not in out, out
        assert kernel_counts(out)[0] >= 4, out
        # A second run finds everything cached.
        out = run(driver, base + ["--cache-dir", str(tmp / "off"), "--compile-jobs", "2"])
        m = PRECOMPILE.search(out)
        assert m and int(m.group(3)) == 0 and int(m.group(4)) == int(m.group(2)), out
        # Nothing to compile ahead: --dry-run, or a single command on the command line.
        assert "precompile" not in run(driver, base + ["--dry-run", "--cache-dir", str(tmp / "dry")])
        out = run(driver, ["--backend", "boo", "--cache-dir", str(tmp / "one")] + LINES[0].split())
        assert "precompile" not in out and kernel_counts(out)[0] >= 1, out
    print("boo-driver precompiles a commands file's kernels; the commands load them from the cache")


if __name__ == "__main__":
    main()
