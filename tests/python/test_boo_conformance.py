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


SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "workloads" / "boo-sample.txt"


def sample_commands():
    # driver.py's reading of a .txt commands file: blank and '#' lines skipped, each line shlex-split.
    return [shlex.split(line) for line in SAMPLE.read_text().splitlines() if line.strip() and not line.startswith("#")]


def test_boo_sample_strict_header(driver, tmp):
    # Mirrors csv_output_test.py::_read_csv_as_dicts over a CSV boo writes for BOO's own sample
    # (workloads/boo-sample.txt, driver/sample_commands.txt upstream): the header byte for byte, one full
    # row per line, 'arguments' = the line's words shlex-joined (the aten lines' double quotes come out as
    # shlex.join's single quotes). The sample's large convs and GEMMs take minutes on the CPU reference,
    # so the whole sample is written by --dry-run, and its cheap lines are timed for real.
    expected_arguments = [shlex.join(c) for c in sample_commands()]
    for extra, numerics in [([], False), (["--verify-numerics"], True)]:
        out = tmp / "sample.csv"
        r = run(driver, ["--dry-run", f"--csv={out}", f"--commands-file={SAMPLE}", *extra])
        assert r.returncode == 0, r.stdout + r.stderr
        rows = read_csv_strict(out, ["cpu"], numerics=numerics)
        assert [row["arguments"] for row in rows] == expected_arguments, rows
    cheap = [c for c in sample_commands() if c[0].startswith(("gemm", "layernorm", "bnorm", "aten::arg", "aten::bmm"))]
    assert len(cheap) >= 10, cheap
    listing = tmp / "cheap.txt"
    listing.write_text("\n".join(shlex.join(c) for c in cheap) + "\n")
    out = tmp / "cheap.csv"
    r = run(driver, [f"--csv={out}", f"--commands-file={listing}"])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = read_csv_strict(out, ["cpu"])
    assert [row["arguments"] for row in rows] == [shlex.join(c) for c in cheap], rows
    assert all(float(row["cpu mean"]) > 0 and row["cpu num_dispatches"] == "1" for row in rows), rows


def test_boo_defaults_header_is_upstreams_default(driver, tmp):
    # Mirrors csv_output_test.py's default backends=[driver.DEFAULT_BACKEND]: under --boo-defaults and
    # without --backend, boo's kernels are named BOO's default backend, so the header is upstream's default
    # header byte for byte. (--dry-run, so that no GPU is needed.)
    out = tmp / "default.csv"
    r = subprocess.run([driver, "--boo-defaults", "--dry-run", f"--csv={out}", f"--commands-file={SAMPLE}"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(read_csv_strict(out, ["iree_boo_experimental"])) == len(sample_commands())
    r = subprocess.run([driver, "--dry-run", f"--csv={out}", "conv", "-F", "1"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and out.read_text().startswith("arguments,boo min,"), r.stdout + r.stderr


def test_tsv_commands_file(driver, tmp):
    # Mirrors driver.py's .tsv splitter (no upstream test): each line split on tabs, words after the file
    # appended, 'arguments' the words shlex-joined.
    listing = tmp / "commands.tsv"
    listing.write_text("\t".join(["convbfp16", "-F", "1", *SHAPE]) + "\n")
    out = tmp / "tsv.csv"
    r = run(driver, [f"--csv={out}", f"--commands-file={listing}", "--iter", "2"])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = read_csv_strict(out, ["cpu"])
    assert [row["arguments"] for row in rows] == [shlex.join(["convbfp16", "-F", "1", *SHAPE, "--iter", "2"])], rows


def test_driver_options_after_the_op(driver, tmp):
    # Mirrors driver.py's parse_known_args: driver options are taken wherever they stand, also after the op's
    # flags, and leave the command ('arguments') without them.
    out = tmp / "after.csv"
    r = subprocess.run([driver, "conv", "-F", "1", *SHAPE, f"--csv={out}", "--backend", "cpu", "--iter=2"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = read_csv_strict(out, ["cpu"])
    assert [row["arguments"] for row in rows] == [shlex.join(["conv", "-F", "1", *SHAPE, "--iter=2"])], rows


def test_argparse_value_forms(driver):
    # Mirrors the argparse forms BOO's op parsers accept: '--flag=value', '-F=1' and the value written
    # against a short flag ('-F1', '-n1'), all the same command as '-F 1'.
    spaced = run(driver, ["--dry-run", "conv", "-F", "1", *SHAPE])
    for words in (["conv", "-F=1", "-n=1", "-c=4", "-H=6", "-W=6", "-k=4", "-y=3", "-x=3"],
                  ["conv", "-F1", "-n1", "-c4", "-H6", "-W6", "-k4", "-y3", "-x3"],
                  ["conv", "--forw=1", "--batchsize=1", "--in_channels=4", "--in_h=6", "--in_w=6",
                   "--out_channels=4", "--fil_h=3", "--fil_w=3"]):
        r = run(driver, ["--dry-run", *words])
        assert r.returncode == 0, r.stdout + r.stderr
        canonical = [l for l in r.stdout.splitlines() if "canonical:" in l]
        assert canonical == [l for l in spaced.stdout.splitlines() if "canonical:" in l], (words, r.stdout)


def test_difference_unknown_words(driver, tmp):
    # Differences from BOO (README): BOO's argparse exits 2 at an unknown flag, ending a commands file
    # there with no row; boo fails that command alone (exit 1 at the end), names the flag, and writes its
    # row. argparse's unique-prefix abbreviations ('--in_lay') are unknown flags in boo.
    listing = tmp / "bad.txt"
    listing.write_text("conv -F 1 --bogus 3\nconv -F 1 --in_lay NHWC\nconv -F 1 " + " ".join(SHAPE) + "\n")
    out = tmp / "bad.csv"
    r = run(driver, [f"--csv={out}", f"--commands-file={listing}"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "unknown flag '--bogus' for conv" in r.stdout and "unknown flag '--in_lay' for conv" in r.stdout, r.stdout
    rows = read_csv_strict(out, ["cpu"])
    assert [row["cpu mean"] == "N.A." for row in rows] == [True, True, False], rows


def test_difference_untimed(driver, tmp):
    # Difference from BOO (README): '-t 0' writes BOO's 'untimed' cells, but is no failure in boo (BOO's
    # driver counts it as an error and exits 1).
    out = tmp / "untimed.csv"
    r = run(driver, [f"--csv={out}", "conv", "-F", "1", "-t", "0", *SHAPE])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = read_csv_strict(out, ["cpu"])
    assert [rows[0][f"cpu {s}"] for s in STATS] == ["untimed"] * 5, rows


def test_aten_and_norm_parser(driver):
    # Mirrors parser_test.py: per-argument ATen dtypes, non-contiguous strides, SDPA with '' types and 'None'
    # concrete values, argmax/argmin, and layernorm's --mode=0/1. Each parses (--dry-run) and keeps its strides.
    bmm = 'aten::bmm "[[2, 3, 4], [2, 4, 5]]" "[\'{0}\', \'{0}\']" "[[12, 4, 1], [20, 5, 1]]" "[\'\', \'\']"'
    lines = [bmm.format(t) for t in ("float", "double", "c10::Half", "c10::BFloat16")] + [
        'aten::bmm "[[672, 3, 3], [672, 3, 25000]]" "[\'float\', \'float\']" "[[16, 1, 4], [75000, 25000, 1]]" '
        '"[\'\', \'\']"',
        'aten::scaled_dot_product_attention "[[32, 8, 128, 64], [32, 8, 128, 64], [32, 8, 128, 64], [], [], [], [], []]" '
        '"[\'c10::Half\', \'c10::Half\', \'c10::Half\', \'\', \'Scalar\', \'Scalar\', \'\', \'Scalar\']" '
        '"[[65536, 8192, 64, 1], [65536, 8192, 64, 1], [65536, 8192, 64, 1], [], [], [], [], []]" '
        '"[\'\', \'\', \'\', \'None\', \'0.0\', \'False\', \'None\', \'False\']"',
        'aten::argmax "[[4, 8, 16], [], []]" "[\'float\', \'Scalar\', \'Scalar\']" "[[128, 16, 1], [], []]" '
        '"[\'\', \'1\', \'False\']"',
        'aten::argmin "[[4, 8, 16], [], []]" "[\'float\', \'Scalar\', \'Scalar\']" "[[128, 16, 1], [], []]" '
        '"[\'\', \'1\', \'False\']"',
        "layernorm --input 2x3x4x5 --mode=0",
        "layernorm --input 2x3x4x5 --mode=1",
    ]
    for line in lines:
        r = run(driver, ["--dry-run", *shlex.split(line)])
        assert r.returncode == 0 and "canonical:" in r.stdout, (line, r.stdout + r.stderr)
    r = run(driver, ["--dry-run", *shlex.split(lines[4])])
    assert "[[16, 1, 4], [75000, 25000, 1]]" in r.stdout, r.stdout
    # Difference from BOO (README): one dtype for every tensor of a call. test_aten_parser's addmm with a
    # float mat2 among bfloat16 tensors is refused, saying which tensor differs.
    r = run(driver, ["--dry-run", "aten::addmm", "[[512], [24576, 512], [512, 512], [], []]",
                     "['c10::BFloat16', 'c10::BFloat16', 'float', 'Scalar', 'Scalar']",
                     "[[1], [512, 1], [1, 512], [], []]", "['', '', '', '10', '20']"])
    assert r.returncode == 1 and "mat2 is float32 but the product is bfloat16" in r.stdout, r.stdout


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
                 test_boo_sample_strict_header, test_boo_defaults_header_is_upstreams_default, test_tsv_commands_file,
                 test_driver_options_after_the_op, test_argparse_value_forms, test_difference_unknown_words,
                 test_difference_untimed, test_aten_and_norm_parser, test_numerics_columns_and_failed_rows, test_difference_csv_extra,
                 test_difference_forward_default]:
        with tempfile.TemporaryDirectory() as d:
            if test.__code__.co_argcount == 2:
                test(driver, pathlib.Path(d))
            else:
                test(driver)
        print("ok", test.__name__)


if __name__ == "__main__":
    main()
