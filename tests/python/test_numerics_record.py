"""boo-driver --verify-numerics on deliberately wrong backends (faulty:<fault>) exits 1 and
names every line, and scripts/numerics_record.py turns a run's CSV into its record: every
line passing on the CPU reference, every line failing on a faulty backend, a run cut short
reported as a shortfall, not as a pass.

Run by ctest (label unit) as: python3 tests/python/test_numerics_record.py path/to/boo-driver
"""
import csv
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMMANDS = [
    "convbfp16 -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -b 1 -F 1",
    "convfp16 -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -g 2 -F 4",
    "layernormbfp16 -X 16x48 -o 1 -m 1 -F 1",
    "t5layernorm -X 16x48 -F 2",
]


def main():
    driver = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        listing = tmp / "list.txt"
        listing.write_text("# a comment\n" + "\n".join(COMMANDS[:2]) + "\n\n" + "\n".join(COMMANDS[2:]) + "\n")

        def run(backend, list_path):
            out = tmp / f"{backend.replace(':', '-')}.csv"
            r = subprocess.run([driver, "--backend", backend, "--commands-file", str(list_path), "--verify-numerics",
                                "--csv", str(out), "--csv-extra", "-t", "0"], capture_output=True, text=True, timeout=600)
            return r, out

        def record(list_path, csv_path):
            return subprocess.run([sys.executable, str(ROOT / "scripts/numerics_record.py"), "--commit", "abc1234",
                                   "--device", "test CPU", f"{list_path}={csv_path}"], capture_output=True, text=True)

        good, good_csv = run("cpu", listing)
        assert good.returncode == 0, good.stdout[-2000:] + good.stderr
        rec = record(listing, good_csv)
        assert rec.returncode == 0, rec.stdout + rec.stderr
        assert f"| `{listing}` | 4 | 4 | 0 | 0 | 0 | PASS |" in rec.stdout, rec.stdout
        assert "commit abc1234" in rec.stdout and "test CPU" in rec.stdout, rec.stdout

        for fault in ("shift", "scale", "nan", "unwritten-tail"):
            bad, bad_csv = run(f"faulty:{fault}", listing)
            assert bad.returncode == 1, f"faulty:{fault}: exit {bad.returncode}\n{bad.stdout[-2000:]}"
            assert bad.stdout.count("\nNumerics: FAIL") == 4, f"faulty:{fault}:\n{bad.stdout[-3000:]}"
            rows = list(csv.DictReader(open(bad_csv, newline="")))
            assert [r["numerics_pass"] for r in rows] == ["FAIL"] * 4, rows
            rec = record(listing, bad_csv)
            assert rec.returncode == 1, rec.stdout
            assert f"| `{listing}` | 4 | 0 | 4 | 0 | 0 | FAIL |" in rec.stdout, rec.stdout
            # Lines as numbered in the file (comment and blank line counted): 2, 3, 5, 6.
            for line, command in zip((2, 3, 5, 6), COMMANDS):
                assert f"- line {line}: `{command}`: numerics: " in rec.stdout, rec.stdout

        # A run cut short (its CSV holds the first two commands): a shortfall, not a pass.
        short = tmp / "short.txt"
        short.write_text("\n".join(COMMANDS[:2]) + "\n")
        _, short_csv = run("cpu", short)
        rec = record(listing, short_csv)
        assert rec.returncode == 1, rec.stdout
        assert f"| `{listing}` | 4 | 2 | 0 | 0 | 2 | FAIL |" in rec.stdout, rec.stdout
        assert f"- line 5: `{COMMANDS[2]}`: no result" in rec.stdout, rec.stdout

        # The driver names the accepted faults for an unknown one.
        r = subprocess.run([driver, "--backend", "faulty:sideways", COMMANDS[0]], capture_output=True, text=True)
        assert r.returncode == 2 and "faulty:<fault>" in r.stderr, r.stderr
    print("numerics record: ok")


if __name__ == "__main__":
    main()
