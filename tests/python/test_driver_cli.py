"""boo-driver's command-line behaviour: one bad line never stops a run, every
command gets one CSV row, exit status, --dry-run over the shipped workloads.

Run by ctest (label unit) as: python3 tests/python/test_driver_cli.py <boo-driver>
"""
import csv
import os
import pathlib
import pty
import re
import subprocess
import sys
import tempfile

GOOD_1 = "conv -n 1 -c 2 -H 5 -W 5 -k 3 -y 3 -x 3 -p 1 -q 1 -F 1 -t 1 --iter 3"
TYPO = "conv -n 1 -c 2 -H 5 -W 5 -k 3 --fil_hh 3 -F 1"
UNSUPPORTED = "softmaxfp16 -n 2 -c 4"
BAD_QUOTE = "conv -n 1 'oops"
INVALID = "conv -n 1 -c 6 -k 4 -g 4 -F 1"
GOOD_2 = "layernormbfp16 -X 4x33 -o 1 -m 1 -F 14 -t 1 --iter 2"


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def test_bad_lines_do_not_stop_the_run(driver, tmp):
    commands = tmp / "mixed.txt"
    commands.write_text("\n".join(["# a comment", GOOD_1, TYPO, "", UNSUPPORTED, BAD_QUOTE, INVALID, GOOD_2]) + "\n")
    out_csv = tmp / "out.csv"
    r = run([driver, "--commands-file", str(commands), "--csv", str(out_csv), "--verbose", "--backend", "cpu"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "unknown flag '--fil_hh' for conv" in r.stdout, r.stdout
    assert "UNSUPPORTED (line 5)" in r.stdout, r.stdout
    assert "unterminated single quote" in r.stdout, r.stdout
    assert "not divisible by the group count" in r.stdout, r.stdout
    assert "6 command(s): 2 ok, 3 failed, 1 unsupported" in r.stdout, r.stdout
    # The good lines ran and were timed with their own --iter.
    assert "num_dispatches=1" in r.stdout  # the CPU reference times one launch by default
    rows = list(csv.reader(out_csv.open(newline="")))
    assert rows[0] == ["arguments", "cpu min", "cpu max", "cpu mean", "cpu stddev", "cpu num_dispatches",
                       "flop_count", "min_bytes", "error"]
    assert len(rows) == 7, rows
    assert all(len(row) == 9 for row in rows), rows
    assert rows[1][0] == GOOD_1 and rows[1][8] == "" and float(rows[1][3]) > 0
    assert float(rows[1][6]) == 2 * 1 * 3 * 2 * 25 * 9  # 2 * N * K * C * Ho * Wo * taps
    assert rows[2][1] == "N.A." and "unknown flag" in rows[2][8]
    assert rows[6][0] == GOOD_2 and rows[6][8] == ""


def test_extra_arguments_are_appended(driver, tmp):
    commands = tmp / "two.tsv"
    commands.write_text("conv\t-n\t1\t-c\t2\t-H\t4\t-W\t4\t-k\t2\t-F\t1\n")
    r = run([driver, "--commands-file", str(commands), "-t", "0", "--verbose", "--backend", "cpu"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "-t 0" in r.stdout and "untimed" in r.stdout, r.stdout


def test_dry_run_over_shipped_workloads(driver, root):
    for name in ["boo-sample.txt", "boo-conv-413.txt", "boo-tuned-conv-257.txt"]:
        r = run([driver, "--dry-run", "--commands-file", str(root / "workloads" / name)])
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr
        assert "func_name: conv_" in r.stdout
        assert " 0 failed" in r.stdout, r.stdout[-500:]


def test_single_command_and_help(driver):
    r = run([driver, "conv", "-n", "1", "-c", "1", "-H", "3", "-W", "3", "-k", "1", "-y", "2", "-x", "2", "-F", "1",
             "--splat-input-value", "1", "--dry-run"])
    assert r.returncode == 0 and "canonical: conv -n 1 -c 1 -H 3 -W 3 -k 1 -y 2 -x 2" in r.stdout, r.stdout
    assert run([driver, "--help"]).returncode == 0
    r = run([driver, "conv", "--help"])
    assert "--in_channels / -c" in r.stdout, r.stdout
    r = run([driver, "--backend", "rocm", "conv"])
    assert r.returncode == 2 and "unknown backend" in r.stderr, r.stderr
    r = run([driver, "--commands-file", "/nonexistent/file.txt"])
    assert r.returncode == 2 and "cannot open" in r.stderr, r.stderr


def test_help_lines_have_no_row(driver, tmp):
    # '<op> --help' in a commands file prints the op's flags and is not a benchmark: no CSV row, in an
    # executor as in this process (an executor used to repeat the previous command's row).
    commands = tmp / "with_help.txt"
    commands.write_text(GOOD_1 + "\nconv --help\n")
    for isolation in [[], ["--no-isolation"]]:
        out_csv = tmp / "help.csv"
        r = run([driver, *isolation, "--backend", "cpu", "--commands-file", str(commands), "--csv", str(out_csv)])
        assert r.returncode == 0, r.stdout + r.stderr
        assert "--in_channels / -c" in r.stdout, r.stdout
        assert r.stderr == "", r.stderr
        rows = list(csv.reader(out_csv.open(newline="")))
        assert [row[0] for row in rows] == ["arguments", GOOD_1], (isolation, rows)


def test_option_values_are_checked(driver):
    for args, message in [(["--seed=x"], "--seed: expected a non-negative integer, got 'x'"),
                          (["--dry-run=1"], "driver option '--dry-run' takes no value"),
                          (["--csv"], "driver option '--csv' needs a value"),
                          (["--timer", "clock"], "--timer: expected cupti or events, got 'clock'"),
                          (["--reference", "tpu"], "--reference: expected auto (the GPU's where the driver has a GPU), "
                                                   "cpu or gpu, got 'tpu'")]:
        r = run([driver, "conv", "-n", "1", *args])
        assert r.returncode == 2 and message in r.stderr, (args, r.stderr)
    usage = run([driver, "--help"]).stdout
    for option in ["--commands-file FILE", "--seed N", "this text", "(default 10)", "--numerics-vendor cudnn|none",
                   "--reference auto|cpu|gpu"]:
        assert option in usage, usage
    assert "--executor-child" not in usage, usage


def run_with_terminal_stderr(args, stdout_path):
    """Runs with stderr on a pseudo-terminal; returns (exit status, what the terminal got)."""
    master, slave = pty.openpty()
    with open(stdout_path, "w") as out:
        p = subprocess.Popen(args, stdout=out, stderr=slave)
    os.close(slave)
    received = b""
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        received += data
    os.close(master)
    return p.wait(), received.decode()


def test_progress_line_on_a_terminal(driver, tmp):
    commands = tmp / "progress.txt"
    commands.write_text("\n".join([GOOD_1, TYPO, GOOD_2]) + "\n")
    for isolation in [[], ["--no-isolation"]]:
        args = [driver, *isolation, "--backend", "cpu", "--commands-file", str(commands)]
        status, terminal = run_with_terminal_stderr(args, tmp / "progress.out")
        assert status == 1, terminal
        # Done/total, failures so far, time left and the current line, redrawn in place and erased at the end.
        assert re.search(r"\[0/3\] 0 failed \| time left unknown", terminal), terminal
        # In this process the line is drawn as each command starts. With executors the driver draws
        # while it waits for a result, so a command already done when its turn comes is never drawn.
        if isolation:
            assert re.search(r"\[0/3\] 0 failed \| time left unknown \| line 1: conv -n 1", terminal), terminal
            assert re.search(r"\[2/3\] 1 failed \| \d+s left \| line 3: layernormbfp16", terminal), terminal
        assert terminal.endswith("\r\x1b[K"), repr(terminal[-40:])
        stdout = (tmp / "progress.out").read_text()
        assert "\x1b" not in stdout and "3 command(s): 2 ok, 1 failed" in stdout, stdout
        assert re.search(r"wall time \d+\.\d s; command time \d+\.\d s: compile", stdout), stdout
        status, terminal = run_with_terminal_stderr(args + ["--quiet"], tmp / "progress.out")
        assert status == 1 and terminal == "", repr(terminal)


def test_boo_backend_names(driver, tmp):
    # BOO's --backend names are accepted and keep their CSV columns (iree_boo* run boo's kernels).
    out_csv = tmp / "names.csv"
    r = run([driver, "--dry-run", "--backend", "iree_boo_experimental", "--backend", "iree_boo_experimental",
             "--csv", str(out_csv), "conv", "-n", "1", "-F", "1"])
    assert r.returncode == 0, r.stdout + r.stderr
    header = next(csv.reader(out_csv.open(newline="")))
    assert header[:6] == ["arguments", "iree_boo_experimental min", "iree_boo_experimental max",
                          "iree_boo_experimental mean", "iree_boo_experimental stddev",
                          "iree_boo_experimental num_dispatches"], header


def test_numerics_reference_is_reported(driver, tmp):
    # --verify-numerics says which reference ran, in the text and the CSV: the CPU's when asked for, and by
    # default when the driver has no GPU backend; --reference gpu runs the GPU's, or says that it needs a GPU.
    command = ["conv", "-n", "1", "-c", "4", "-H", "6", "-W", "5", "-k", "4", "-y", "3", "-x", "3", "-F", "1", "-t", "0"]
    for choice in ["cpu", "auto"]:
        out_csv = tmp / f"reference_{choice}.csv"
        r = run([driver, "--backend", "cpu", "--verify-numerics", "--reference", choice, "--csv", str(out_csv),
                 "--verbose", *command])
        assert r.returncode == 0, r.stdout + r.stderr
        assert "cpu Numerics: PASS [reference: cpu:conv:reference (whole results)]" in r.stdout, r.stdout
        rows = list(csv.DictReader(out_csv.open(newline="")))
        assert rows[0]["numerics_reference"] == "cpu:conv:reference (whole results)", rows
    r = run([driver, "--backend", "cpu", "--verify-numerics", "--reference", "gpu", *command])
    if r.returncode == 0:
        assert "[reference: gpu:conv:reference on cuda:" in r.stdout, r.stdout
    else:
        assert "--reference gpu needs a usable GPU" in r.stdout + r.stderr, r.stdout + r.stderr


def main():
    driver = sys.argv[1]
    root = pathlib.Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        test_bad_lines_do_not_stop_the_run(driver, tmp)
        test_extra_arguments_are_appended(driver, tmp)
        test_dry_run_over_shipped_workloads(driver, root)
        test_single_command_and_help(driver)
        test_boo_backend_names(driver, tmp)
        test_help_lines_have_no_row(driver, tmp)
        test_option_values_are_checked(driver)
        test_numerics_reference_is_reported(driver, tmp)
        test_progress_line_on_a_terminal(driver, tmp)
    print("driver CLI behaves")


if __name__ == "__main__":
    main()
