"""boo tune and the tuning database through the boo tool, without a GPU (label nvrtc: compiles with NVRTC).

Run by ctest as: python3 tests/python/test_tune.py <boo> <folder of the fake libcuda>
On the fake libcuda (tests/fake_cuda: host memory, every kernel "takes" the same time) boo tune runs its
whole path: candidates, parallel compile, executor child, timing, the row; a rerun resumes; the rows go
to JSON and back; boo explain says which config the database chose, and ignores damaged or foreign rows;
the export, as a shipped tuning file (BOO_SHIPPED_TUNING), is used where the user's database has no row;
a config that kills the tuner's child costs only itself; a config's lead over the heuristic's is re-timed in
turn with it before a row is written.
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

COMMANDS = [
    "convbfp16 -n 1 -c 16 -H 8 -W 8 -k 16 -y 1 -x 1 -F 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
    "layernormbfp16 -X 64x256 -o 1 -F 1",
]


def run(args, env=None):
    r = subprocess.run(args, capture_output=True, text=True, env={**os.environ, **(env or {})})
    print("$", " ".join(args), "->", r.returncode)
    return r


def check(condition, what, r):
    if not condition:
        print(f"FAIL: {what}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}")
        sys.exit(1)


def main():
    boo, fake = sys.argv[1], sys.argv[2]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="boo_tune_"))
    cmds = tmp / "cmds.txt"
    cmds.write_text("\n".join(COMMANDS) + "\n")
    db = str(tmp / "tuning.sqlite")
    gpu = {"BOO_CUDA_DRIVER_DIR": fake, "BOO_CACHE_DIR": str(tmp / "cache")}
    tune = [boo, "tune", "--commands-file", str(cmds), "--tuning-db", db, "--top", "3",
            "--budget-per-signature", "1", "-j", "2"]

    # Without a GPU: a clear refusal before anything is compiled.
    r = run(tune, {"BOO_CUDA_DRIVER_DIR": str(tmp / "no-driver-here")})
    check(r.returncode == 2 and "timing configs needs a GPU" in r.stderr, "boo tune without a GPU", r)
    r = run([boo, "tune", "--tuning-db", db])
    check(r.returncode == 2 and "expected --commands-file" in r.stderr, "boo tune with nothing to do", r)

    r = run(tune, gpu)
    check(r.returncode == 0 and "2 signatures to tune" in r.stdout, "boo tune on the fake GPU", r)
    check(r.stdout.count("kept") >= 2 and "configs timed" in r.stdout and "ETA" in r.stdout,
          "each signature's progress line", r)
    # A rerun resumes: both have a row of this version.
    r = run(tune, gpu)
    check(r.returncode == 0 and "0 signatures to tune" in r.stdout and "2 already tuned" in r.stdout, "resume", r)

    # --gpu-id -1: a tuner per GPU (two fake ones), sharing a new database.
    db2 = str(tmp / "tuning-two-gpus.sqlite")
    tune2 = [boo, "tune", "--commands-file", str(cmds), "--tuning-db", db2, "--top", "3",
             "--budget-per-signature", "1", "-j", "2", "--gpu-id", "-1"]
    r = run(tune2, {**gpu, "BOO_FAKE_DEVICES": "2"})
    check(r.returncode == 0 and "2 signatures to tune" in r.stdout and " x 2," in r.stdout and
          "[2/2 " in r.stdout, "boo tune --gpu-id -1 over two GPUs", r)
    r = run(tune2, {**gpu, "BOO_FAKE_DEVICES": "2"})
    check(r.returncode == 0 and "2 already tuned" in r.stdout, "resume over two GPUs", r)
    r = run([boo, "info", "--gpu-id", "-1"], gpu)
    check(r.returncode == 2 and "is for boo tune" in r.stderr, "--gpu-id -1 outside boo tune", r)

    # A config whose kernel kills the executor child (BOO_TEST_TUNE_CRASH: the child aborts when it tries
    # config 1) costs only itself: the signature is tuned again without it, and the next one runs.
    db3 = str(tmp / "tuning-crash.sqlite")
    crash = [boo, "tune", "--commands-file", str(cmds), "--tuning-db", db3, "--top", "3",
             "--budget-per-signature", "1", "-j", "2"]
    r = run(crash, {**gpu, "BOO_TEST_TUNE_CRASH": "1"})
    check(r.returncode == 0 and "config 1 faulted" in r.stdout and "retrying without it" in r.stdout and
          r.stdout.count("2 of 3 configs timed") == 2 and "0 failed" in r.stdout and "[2/2 " in r.stdout,
          "a crashing config costs only itself", r)
    # The heuristic's own config crashing fails that signature alone, said so.
    db4 = str(tmp / "tuning-crash-heuristic.sqlite")
    r = run(crash[:5] + [db4] + crash[6:], {**gpu, "BOO_TEST_TUNE_CRASH": "0"})
    check(r.returncode == 1 and r.stdout.count("(the heuristic's config)") == 2 and "2 failed" in r.stdout,
          "a crashing heuristic config", r)

    # A lead from one timing each is re-timed in turn before it is written (BOO_TEST_TUNE_SLOW_HEURISTIC: the
    # first pass's heuristic timing doubled, as if taken at a lower clock; on the fake GPU every kernel takes
    # one time): the lead is gone, the heuristic's config kept, and said so.
    db5 = str(tmp / "tuning-retimed.sqlite")
    r = run(crash[:5] + [db5] + crash[6:], {**gpu, "BOO_TEST_TUNE_SLOW_HEURISTIC": "2"})
    check(r.returncode == 0 and r.stdout.count("lost its lead re-timed in turn with the heuristic's (1.000x)") == 2
          and "0 tuned, 2 kept" in r.stdout, "a first-pass lead re-timed", r)

    exported = str(tmp / "rows.json")
    r = run([boo, "tune", "--tuning-db", db, "--export", exported])
    check(r.returncode == 0, "export", r)
    objects = json.loads(pathlib.Path(exported).read_text())
    rows = [o for o in objects if o.get("kind") != "measurement"]
    check(len(rows) == 2 and {row["implementation"] for row in rows} ==
          {"gpu:conv:implicit_gemm", "gpu:layernorm:rows"}, "two rows exported", r)
    check(all(row["time_us"] > 0 and row["heuristic_us"] > 0 and row["config"] for row in rows), "row fields", r)
    # Every timed candidate is kept: the heuristic's flagged, the conv's with its cost model's terms.
    timed = [o for o in objects if o.get("kind") == "measurement"]
    for row in rows:
        mine = [m for m in timed if m["implementation"] == row["implementation"] and m["problem"] == row["problem"]]
        check(len(mine) >= 2 and sum(m["heuristic"] for m in mine) == 1 and
              all(m["measured_us"] > 0 for m in mine), f"{row['implementation']}'s measurements", r)
        if row["implementation"] == "gpu:conv:implicit_gemm":
            check(all(m["predicted_us"] > 0 and m.get("term.compute_mma_sync", 0) > 0 for m in mine),
                  "the conv's cost-model terms", r)
    copy = str(tmp / "copy.sqlite")
    r = run([boo, "tune", "--tuning-db", copy, "--import", exported, "--export", str(tmp / "again.json")])
    check(r.returncode == 0 and f"imported {len(objects)} rows" in r.stdout, "import", r)
    check(pathlib.Path(exported).read_text() == (tmp / "again.json").read_text(), "JSON round trip", r)

    conv = next(row for row in rows if row["implementation"] == "gpu:conv:implicit_gemm")
    explain = [boo, "explain", conv["problem"], "--tuning-db"]
    r = run(explain + [copy], gpu)
    check(r.returncode == 0 and "config from: tuning database " + copy in r.stdout and
          "the heuristic's config measured best" in r.stdout, "explain names the database", r)

    # A damaged row and a row of another version are not trusted: the heuristic runs, and a log line says why.
    for what, edit, said in [("config", "tile 1x1x1", "ignored a database row"),
                             ("version", "0.0.0+0000000000000000", "ignored a row of version 0.0.0+0000000000000000")]:
        bad = dict(conv, **{what: edit})
        path = tmp / f"bad_{what}.json"
        path.write_text(json.dumps([bad]))
        bad_db = str(tmp / f"bad_{what}.sqlite")
        r = run([boo, "tune", "--tuning-db", bad_db, "--import", str(path)])
        check(r.returncode == 0, f"import a row with another {what}", r)
        r = run(explain + [bad_db], gpu)
        check(r.returncode == 0 and "config from: heuristic (" + said in r.stdout, f"explain ignores another {what}", r)
        check("boo: warning: tuning database" in r.stderr and "ignored" in r.stderr, f"the log line ({what})", r)
    # A file that is not a tuning database: explain warns and uses the heuristic.
    junk = tmp / "junk.sqlite"
    junk.write_text("not a database" * 20)
    r = run(explain + [str(junk)], gpu)
    check(r.returncode == 0 and "config from: heuristic" in r.stdout and "not used" in r.stderr, "a junk file", r)

    # The export as a shipped tuning file (tuning/README.md's name for the device): used where the user's
    # database has no row, losing to its row, off with BOO_SHIPPED_TUNING=0, ignored (said once) when corrupt.
    device = re.search(r"^device: +(.*) \(sm_", r.stdout, re.M).group(1)
    shipped = tmp / "shipped"
    shipped.mkdir()
    shipped_file = shipped / (re.sub(r"[^A-Za-z0-9.-]", "_", device) + ".json")
    shipped_file.write_text(pathlib.Path(exported).read_text())
    on = {**gpu, "BOO_SHIPPED_TUNING": str(shipped)}
    no_db = explain + [str(tmp / "no-such.sqlite")]
    r = run(no_db, on)
    check(r.returncode == 0 and f"shipped:   {shipped_file}: 2 rows" in r.stdout and
          f"config from: shipped tuning {shipped_file} (" in r.stdout, "explain names the shipped file", r)
    r = run(explain + [copy], on)
    check(r.returncode == 0 and "config from: tuning database " + copy in r.stdout, "the user's row wins", r)
    r = run(no_db, {**gpu, "BOO_SHIPPED_TUNING": "0"})
    check(r.returncode == 0 and "shipped:   none" in r.stdout and
          "config from: heuristic\n" in r.stdout, "BOO_SHIPPED_TUNING=0", r)
    # The refit of the export (scripts/refit_cost_model.py) beside the shipped file: explain names it as the
    # model that ranked the configs; BOO_SHIPPED_TUNING=0 turns it off with the rows.
    cost_file = shipped / (re.sub(r"[^A-Za-z0-9.-]", "_", device) + ".cost.json")
    script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "refit_cost_model.py"
    r = run([sys.executable, str(script), exported, "--out", str(cost_file)])
    check(r.returncode == 0 and cost_file.exists(), "the refit of boo tune's export", r)
    r = run(no_db, on)
    check(r.returncode == 0 and f"cost model: refitted {cost_file} (" in r.stdout, "explain names the cost file", r)
    r = run(no_db, {**gpu, "BOO_SHIPPED_TUNING": "0"})
    check(r.returncode == 0 and "cost model: hand-set" in r.stdout, "BOO_SHIPPED_TUNING=0 and the cost file", r)
    shipped_file.write_text("[{\"implementation\": ")
    r = run(no_db, on)
    check(r.returncode == 0 and "config from: heuristic (the shipped tuning could not be read" in r.stdout and
          r.stderr.count(f"the shipped tuning {shipped_file} is not used") == 1, "a corrupt shipped file", r)
    print("PASS")


if __name__ == "__main__":
    main()
