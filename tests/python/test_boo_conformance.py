"""Conformance with upstream BOO's driver (iree-turbine's iree-boo-driver, issue 26): each test re-states a
behaviour upstream's tests/kernel/boo/driver/ tests check, on boo's CPU backend, citing the test it mirrors.
Where boo deliberately differs (README "Differences from BOO"), the test asserts boo's behaviour.

Run by ctest (label unit) as: python3 tests/python/test_boo_conformance.py <boo-driver>
"""
import csv
import pathlib
import shlex
import subprocess
import sys
import tempfile

# A small conv, so the float64 CPU reference is quick.
SHAPE = ["-n", "1", "-c", "4", "-H", "6", "-W", "6", "-k", "4", "-y", "3", "-x", "3"]
STATS = ["min", "max", "mean", "stddev", "num_dispatches"]
NUMERICS = ["numerics_pass", "boo_vs_ref_mean", "boo_vs_ref_stddev", "boo_vs_ref_max", "pytorch_vs_ref_mean",
            "pytorch_vs_ref_stddev", "pytorch_vs_ref_max", "boo_vs_pytorch_mean", "boo_vs_pytorch_stddev",
            "boo_vs_pytorch_max", "structured_test"]


def run(driver, args, **kw):
    return subprocess.run([driver, "--backend", "cpu", *args], capture_output=True, text=True, timeout=600, **kw)


def read_csv_strict(path, backends, numerics=False):
    # Mirrors csv_output_test.py::_read_csv_as_dicts: the header line compared byte for byte, then a
    # strict reader over the rows.
    lines = path.read_text().splitlines()
    assert len(lines) > 1, lines
    expected = ["arguments"] + [f"{b} {s}" for b in backends for s in STATS] + (NUMERICS if numerics else [])
    assert lines[0] == ",".join(expected), lines[0]
    rows = list(csv.DictReader(lines[1:], fieldnames=expected, strict=True))
    assert all(None not in r and all(v is not None for v in r.values()) for r in rows), rows
    return rows


def test_main_exit_codes(driver):
    # Mirrors cli_test.py::test_main: a bare 'conv' runs and exits 0; an unknown op exits 1.
    assert run(driver, ["conv", "-n", "1", "-c", "3", "-H", "8", "-W", "8", "-k", "4"]).returncode == 0
    r = run(driver, ["invalid-command"])
    assert r.returncode == 1 and "unknown op 'invalid-command'" in r.stdout, r.stdout


def test_commands_file_with_driver_options(driver, tmp):
    # Mirrors cli_test.py::test_commands_file: comments and blank lines skipped, --iter after the file
    # appended to every line, --no-verbose accepted.
    commands = tmp / "commands.txt"
    commands.write_text("\n".join(["conv " + " ".join(SHAPE), "# ignored comment", "", "convbfp16 -F 1 " +
                                   " ".join(SHAPE)]))
    r = run(driver, ["--commands-file", str(commands), "--iter", "1", "--no-verbose"])
    assert r.returncode == 0 and "2 command(s): 2 ok" in r.stdout, r.stdout + r.stderr


def test_cache_dir_then_run_flags(driver, tmp):
    # Mirrors cli_test.py::test_cache_dir: a driver option, then a run flag, then the op
    # ('--cache-dir D --iter 1 conv'). The CPU backend compiles nothing, so the folder is only accepted.
    r = run(driver, ["--cache-dir", str(tmp / "cache"), "--iter", "1", "conv", *SHAPE])
    assert r.returncode == 0, r.stdout + r.stderr
    # A leading word that is neither a driver option nor a run flag is still a bad driver option (exit 2).
    r = run(driver, ["--bogus", "conv"])
    assert r.returncode == 2 and "unknown driver option '--bogus'" in r.stderr, r.stderr


def test_roundtrip_csv_single_command(driver, tmp):
    # Mirrors csv_output_test.py::test_roundtrip_csv_single_command: '--csv=F convbfp16 -F=1 --iter=4' writes
    # BOO's header, one row, 'arguments' = the command shell-joined, num_dispatches = --iter for a one-kernel
    # forward conv. Difference: the CPU backend times --cpu-iterations launches (default 1), so the test asks for 4.
    out = tmp / "conv_stats.csv"
    command = ["convbfp16", "-F=1", "--iter=4", *SHAPE]
    r = run(driver, [f"--csv={out}", "--cpu-iterations=4", *command])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = read_csv_strict(out, ["cpu"])
    assert len(rows) == 1 and rows[0]["arguments"] == shlex.join(command), rows
    assert rows[0]["cpu num_dispatches"] == "4", rows


def test_roundtrip_csv_commands_file(driver, tmp):
    # Mirrors csv_output_test.py::test_roundtrip_csv_commands_file: '--csv=F --commands-file=F'; each row's
    # 'arguments' is its line, num_dispatches its --iter.
    commands = [["convbfp16", "-F", "1", *SHAPE, "--iter", "4"],
                ["convbfp16", "-F", "1", *SHAPE, "--in_layout", "NHWC", "--fil_layout", "NHWC", "--out_layout", "NHWC",
                 "--iter", "2"]]
    listing = tmp / "commands.txt"
    listing.write_text("\n".join(shlex.join(c) for c in commands))
    out = tmp / "conv_stats.csv"
    r = run(driver, [f"--csv={out}", f"--commands-file={listing}", "--cpu-iterations=4"])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = read_csv_strict(out, ["cpu"])
    assert [row["arguments"] for row in rows] == [shlex.join(c) for c in commands], rows
    assert [row["cpu num_dispatches"] for row in rows] == [c[-1] for c in commands], rows


def test_tab_separated_argument(driver):
    # Mirrors driver.py's tab splitting (no upstream test): one argument pasted from a .tsv line.
    r = run(driver, ["--dry-run", "convbfp16\t-F\t1\t-n\t1"])
    assert r.returncode == 0 and "-F 1" in r.stdout, r.stdout + r.stderr


def test_numerics_columns_and_failed_rows(driver, tmp):
    # Mirrors csv_output_test.py's strict header with --verify-numerics (driver.py's eleven numerics columns):
    # cuDNN's statistics would stand in the pytorch_* columns; a failed command still gets a full row.
    listing = tmp / "numerics.txt"
    listing.write_text("conv -F 1 -t 0 " + " ".join(SHAPE) + "\nconv -n 1 --no_such_flag 3\n")
    out = tmp / "numerics.csv"
    r = run(driver, ["--verify-numerics", "--csv", str(out), "--commands-file", str(listing)])
    assert r.returncode == 1, r.stdout + r.stderr
    rows = read_csv_strict(out, ["cpu"], numerics=True)
    assert rows[0]["numerics_pass"] == "PASS" and rows[1]["numerics_pass"] == "N.A.", rows


def test_difference_csv_extra(driver, tmp):
    # Difference from BOO: --csv-extra appends boo's own columns (vendor named cudnn, numerics_reference,
    # flop_count, min_bytes, error).
    out = tmp / "extra.csv"
    r = run(driver, ["--csv", str(out), "--csv-extra", "--verify-numerics", "conv", "-F", "1", "-t", "0", *SHAPE])
    assert r.returncode == 0, r.stdout + r.stderr
    header = next(csv.reader(out.open(newline="")))
    assert header[6:] == ["numerics_pass", "boo_vs_ref_mean", "boo_vs_ref_stddev", "boo_vs_ref_max",
                          "cudnn_vs_ref_mean", "cudnn_vs_ref_stddev", "cudnn_vs_ref_max", "boo_vs_cudnn_mean",
                          "boo_vs_cudnn_stddev", "boo_vs_cudnn_max", "structured_test", "numerics_reference",
                          "flop_count", "min_bytes", "error"], header


def test_difference_forward_default(driver):
    # Difference from BOO: conv's -F defaults to MIOpenDriver's 0 (all three passes), with a one-time note;
    # --boo-defaults gives BOO's 1 (forward only).
    r = run(driver, ["--dry-run", "conv", "-n", "1"])
    assert r.returncode == 0 and " -F 0\n" in r.stdout and r.stderr.count("note: conv lines without -F") == 1, r
    r = run(driver, ["--dry-run", "--boo-defaults", "conv", "-n", "1"])
    assert r.returncode == 0 and " -F 1\n" in r.stdout and "note:" not in r.stderr, r


def main():
    driver = sys.argv[1]
    for test in [test_main_exit_codes, test_commands_file_with_driver_options, test_cache_dir_then_run_flags,
                 test_roundtrip_csv_single_command, test_roundtrip_csv_commands_file, test_tab_separated_argument,
                 test_numerics_columns_and_failed_rows, test_difference_csv_extra, test_difference_forward_default]:
        with tempfile.TemporaryDirectory() as d:
            if test.__code__.co_argcount == 2:
                test(driver, pathlib.Path(d))
            else:
                test(driver)
        print("ok", test.__name__)


if __name__ == "__main__":
    main()
