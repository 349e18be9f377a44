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
    r = run([driver, "--commands-file", str(commands), "--csv", str(out_csv), "--csv-extra", "--verbose", "--backend", "cpu"])
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


def test_hostile_sizes(driver, tmp):
    # Issue #22, defects 1-5: each used to crash (SIGSEGV, SIGFPE, SIGABRT), run with a wrong shape or
    # truncate a value; each is now a failed command with its message, and the run goes on.
    cases = [
        ("conv -n 1 -c 2305843009213693953 -H 1 -W 8 -k 8 -y 1 -x 1 -F 1 --iter 1",
         "x would hold more than 2^48 (281474976710656) elements"),
        ("layernorm -X 2305843009213693953x8 -o 1", "would hold more than 2^48"),
        ("conv -z same -u 0", "--pad_mode/-z same needs a positive stride"),
        ("conv -n 1 -c 3 -H 8 -W 8 -k 4 -y 3 -x 3 -j 9223372036854775807 -F 1",
         "dilation_w (-j) 9223372036854775807 is over boo's limit"),
        ("layernorm -X 2x3x4 -o 4294967298", "--normalized_dim/-o 4294967298 is not an axis"),
        ("layernorm -X 2x3x4 -o 1 --input-permutation 0 4294967298 1", "4294967298 is not an axis"),
        ("conv -n 100000 -c 1000 -H 1000 -W 1000 -k 1000 -y 1 -x 1 -F 1",
         "RESOURCE_EXHAUSTED: this command (inputs, results and the float64 CPU reference) needs 2.1 PiB"),
    ]
    for command, message in cases:
        for mode in [["--no-isolation"], ["--dry-run"], []]:
            if mode == ["--dry-run"] and "RESOURCE_EXHAUSTED" in message:
                continue  # a valid signature: --dry-run accepts it
            r = run([driver, "--backend", "cpu", *mode, *command.split()])
            assert r.returncode == 1 and message in r.stdout, (command, mode, r.returncode, r.stdout, r.stderr)
    # A file of them, with good lines between: every line gets its row and the summary is printed.
    commands = tmp / "hostile.txt"
    commands.write_text("\n".join(c for c, _ in cases for c in (c, GOOD_1)) + "\n")
    for mode in [["--no-isolation"], ["--dry-run"]]:
        out_csv = tmp / "hostile.csv"
        r = run([driver, "--backend", "cpu", *mode, "--commands-file", str(commands), "--csv", str(out_csv)])
        assert r.returncode == 1, (mode, r.stdout, r.stderr)
        failed = len(cases) - (1 if mode == ["--dry-run"] else 0)
        assert f"14 command(s): {14 - failed} ok, {failed} failed" in r.stdout, (mode, r.stdout)
        assert len(list(csv.reader(out_csv.open(newline="")))) == 15


def test_driver_honesty(driver, tmp):
    # Issue #22, defects 9-12: bad driver options and outputs that cannot be written are exit 2 before any
    # command runs; no input is overwritten, no link followed; echoed input is escaped and capped.
    work = tmp / "honesty"
    work.mkdir()
    good = GOOD_1.split()
    folder = work / "folder"
    folder.mkdir()

    def refused(args, message):
        r = run([driver, "--backend", "cpu", *args], cwd=work)
        assert r.returncode == 2 and message in r.stderr, (args, r.returncode, r.stdout, r.stderr)
        assert "command(s)" not in r.stdout, (args, r.stdout)  # nothing ran

    refused(["--bogus-option", "conv"], "unknown driver option '--bogus-option'")
    refused(["--commands-file", str(folder)], "is a folder, not a file")
    refused(["--trace", str(folder), *good], "--trace '" + str(folder) + "' is a folder")
    refused(["--csv", str(folder), *good], "is a folder; give the path of a file")
    refused(["--trace", "/nonexistent/t.json", *good], "the folder '/nonexistent' does not exist")
    commands = work / "same.txt"
    commands.write_text(GOOD_1 + "\n")
    refused(["--csv", str(commands), "--commands-file", str(commands)], "is the --commands-file")
    assert commands.read_text() == GOOD_1 + "\n"
    target = work / "target.txt"
    target.write_text("keep me\n")
    (work / "link.csv").symlink_to(target)
    refused(["--csv", "link.csv", *good], "--csv 'link.csv' is a symbolic link")
    assert target.read_text() == "keep me\n"
    # --trace writes its parts under names no earlier run used: an existing F.part0 is left alone.
    (work / "t.json.part0").write_text("someone's file\n")
    r = run([driver, "--backend", "cpu", "--no-isolation", "--trace", "t.json", *good], cwd=work)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "t.json.part0").read_text() == "someone's file\n"
    assert sorted(p.name for p in work.glob("t.json*")) == ["t.json", "t.json.part0"]
    # An existing CSV is replaced, and the run says so.
    for _ in range(2):
        r = run([driver, "--backend", "cpu", "--csv", "out.csv", *good], cwd=work)
    assert r.returncode == 0 and "--csv replaces the existing file out.csv" in r.stdout, r.stdout + r.stderr
    # --dump refuses a folder with files in it unless told to append, and never writes through a link.
    dump = work / "dump"
    dump.mkdir()
    (dump / "earlier.npy").write_text("")
    refused(["--dump", "dump", *good], "--dump 'dump' is not empty (1 entries)")
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    entry = "0001_conv_2d_float32_forward_1x2x5x5_nchw_3x2x3x3_fchw_nfhw_1x1s_1x1p_1x1d_1g"
    (dump / entry).symlink_to(elsewhere)
    r = run([driver, "--backend", "cpu", "--no-isolation", "--dump", "dump", "--dump-append", *good], cwd=work)
    assert r.returncode == 1 and "is a symbolic link; boo-driver writes only into real folders" in r.stdout, r.stdout
    assert list(elsewhere.iterdir()) == []
    (dump / entry).unlink()
    r = run([driver, "--backend", "cpu", "--dump", "dump", "--dump-append", *good], cwd=work)
    assert r.returncode == 0 and (dump / entry / "manifest.txt").exists(), r.stdout + r.stderr
    # Garbage layouts are not ranks; control bytes are escaped; huge words are cut.
    for args, message in [
        (["conv", "--in_layout", "N" * 1000, "-F", "1"],
         "--in_layout/-I '" + "N" * 64 + "... (1000 bytes)' is not a conv layout"),
        (["conv", "--in_layout", "\uff2e\uff23\uff28\uff37", "-F", "1"], "is not a conv layout"),
        (["conv", "-n", "\x1b[31mred", "-F", "1"], "expected an integer, got '\\x1b[31mred'"),
        (["conv", "-n", "9" * 3000, "-F", "1"], "... (3000 bytes)"),
    ]:
        r = run([driver, "--dry-run", *args])
        assert r.returncode == 1 and message in r.stdout, (args, r.stdout)
        assert "\x1b" not in r.stdout and "-D convolution" not in r.stdout, r.stdout
        failure = [line for line in r.stdout.splitlines() if line.startswith(">>> FAILED")]
        assert len(failure) == 1 and len(failure[0]) < 400, r.stdout


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
        r = run([driver, "--backend", "cpu", "--verify-numerics", "--reference", choice, "--csv", str(out_csv), "--csv-extra",
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
        test_hostile_sizes(driver, tmp)
        test_driver_honesty(driver, tmp)
    print("driver CLI behaves")


if __name__ == "__main__":
    main()
