"""cuBLASLt algorithms remembered across runs, on a stand-in for libcublasLt
(with the fake libcuda): the first run asks the heuristics for each GEMM's
candidates, times them and stores the choice; the next checks the stored
algorithm and searches nothing; an unusable entry is reported and searched
again. The driver's vendor baseline (--backend cudnn) runs GEMMs on cuBLASLt
and prints boo/vendor ratios for them.

Run by ctest with BOO_CUDA_DRIVER_DIR and BOO_CUBLASLT_DIR naming the fakes, as:
python3 tests/python/test_cublaslt_plans_fake.py <boo-driver>
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# Two GEMMs: a gemm command and an ATen mm with a column-major self.
COMMANDS = ["gemmbfp16 --a_w 64 --a_h 32 --b_w 48 -t 1 --iter 3",
            "aten::mm \"[[64, 32], [32, 48]]\" \"['c10::Half', 'c10::Half']\" \"[[1, 64], [48, 1]]\" \"['', '']\" --iter 3"]


def run(driver, tmp, log_name, *args):
    log = tmp / log_name
    env = dict(os.environ, FAKE_CUBLASLT_LOG=str(log))
    r = subprocess.run([driver, "--cache-dir", str(tmp / "cache"), "--commands-file", str(tmp / "commands.txt"), *args],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    events = log.read_text().split("\n")[:-1] if log.exists() else []
    return r, events


def plan_files(tmp):
    return sorted((tmp / "cache" / "vendor-plans" / "cublaslt").rglob("*.txt"))


def main():
    driver = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        (tmp / "commands.txt").write_text("\n".join(COMMANDS) + "\n")

        first, events = run(driver, tmp, "first.log", "--backend", "cublaslt")
        assert events.count("heuristics") == 2, events
        files = plan_files(tmp)
        assert len(files) == 2, files
        for f in files:
            text = f.read_text()
            assert text.startswith("boo vendor plan 1\nrecord: cublaslt 130100 | "), text
            assert re.search(r"\nplan: algo 000000000000000[12]0{112}\n$", text), text
        assert first.stdout.count("cublaslt:gemm [algo ") >= 2, first.stdout

        # The next run checks the remembered algorithms and searches nothing.
        second, events = run(driver, tmp, "second.log", "--backend", "cublaslt")
        assert "heuristics" not in events, events
        assert sorted(set(events)) <= ["check 1", "check 2"], events
        assert second.stderr == "", second.stderr

        # An algorithm cuBLASLt rejects is reported, searched again and replaced.
        files[0].write_text(files[0].read_text().replace("plan: algo 000000000000000", "plan: algo 00000000000000f"))
        third, events = run(driver, tmp, "third.log", "--backend", "cublaslt")
        assert events.count("heuristics") == 1, events
        assert "the remembered cuBLASLt algorithm in" in third.stderr, third.stderr
        assert "00000000000000f" not in files[0].read_text()

        # The vendor baseline: boo against cudnn runs the GEMMs on cuBLASLt, with ratios.
        vendor, _ = run(driver, tmp, "vendor.log", "--backend", "boo", "--backend", "cudnn")
        assert vendor.stdout.count("Ratio boo/cudnn") == 2, vendor.stdout
        # cuBLASLt runs no conv: alone it fails the command, saying so.
        (tmp / "commands.txt").write_text("conv -n 1 -c 8 -H 8 -W 8 -k 8 -F 1 -t 0\n")
        r = subprocess.run([driver, "--backend", "cublaslt", "--commands-file", str(tmp / "commands.txt")],
                           capture_output=True, text=True)
        assert r.returncode != 0 and "the cublaslt backend runs GEMMs" in r.stdout, r.stdout + r.stderr
    print("cuBLASLt plans: remembered, reused, repaired; vendor ratios for GEMMs")


if __name__ == "__main__":
    main()
