"""Every shipped tuning row is one the runtime reads (label unit: plans, compiles nothing).

Run by ctest as: python3 tests/python/test_shipped_rows.py <boo> <tuning folder>

A row is read only while its tuning version (the library's version and a digest of the device sources its
tier's candidate configs include) and its config text match what the tier plans now. An edit to a kernel header
or to a config's wording silently retires the rows it touches; they must be restamped (the kernels' SASS shown
unchanged) or tuned again. For each file of the folder, its rows are given to `boo explain` as the shipped
tuning of the GPU-less sm_90a device (the device name replaced), and every row's problem, explained with
its implementation, must say "config from: shipped".
"""
import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys
import tempfile

NO_DEVICE = "sm_90a (no device)"


def main():
    boo, folder = sys.argv[1], pathlib.Path(sys.argv[2])
    files = sorted(folder.glob("*.json"))
    if not files:
        print(f"FAIL: no shipped tuning file in {folder}")
        return 1
    failures = []
    total = 0
    for path in files:
        rows = json.loads(path.read_text())
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="boo_shipped_rows_"))
        (tmp / "sm_90a__no_device_.json").write_text(json.dumps([dict(r, device=NO_DEVICE) for r in rows]))
        env = {**os.environ, "BOO_SHIPPED_TUNING": str(tmp), "BOO_TUNING_DB": str(tmp / "none.sqlite")}

        def explain(row):
            r = subprocess.run([boo, "explain", row["problem"], "--arch", row["arch"], "--impl", row["implementation"]],
                               env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
            line = next((l for l in r.stdout.splitlines() if l.startswith("config from:")), r.stderr.strip())
            return row, line

        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for row, line in pool.map(explain, rows):
                total += 1
                if not line.startswith("config from: shipped"):
                    failures.append(f"{path.name}: {row['implementation']} {row['problem']}: {line}")
    for f in failures[:40]:
        print("NOT READ", f)
    print(f"{total} rows of {len(files)} files, {len(failures)} not read")
    if failures:
        print("FAIL: restamp the rows whose kernels compile as before, tune the others again (tuning/README.md)")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
