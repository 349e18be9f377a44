"""boo report: the command line (`boo report`, or `python3 tools/report/boo_report`)."""
import argparse
import sys

USAGE = """boo report RUN.csv [MORE.csv ...] -o REPORT.html [options]

A self-contained HTML report (one file, figures embedded) of boo-driver CSVs: boo/vendor time ratios per
direction, op and layout; a roofline of boo and the vendor; the slowest and fastest lines; numerics.
Two CSVs of the same list of commands are compared (the first is 'before'); other CSVs are read as one run."""

MATPLOTLIB_PIN = "matplotlib==3.11.2"  # requirements-dev.txt's


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="boo report", usage=USAGE)
    ap.add_argument("csv", nargs="+", help="boo-driver CSVs (--csv; --csv-extra adds flop_count/min_bytes)")
    ap.add_argument("-o", "--output", required=True, help="the HTML file to write")
    ap.add_argument("--png-dir", help="also write the figures here as PNG files")
    ap.add_argument("--title", help="the report's title (default: from the file names)")
    ap.add_argument("--device", help="the device, when neither the CSV nor its name says (e.g. 'NVIDIA H200')")
    ap.add_argument("--peak-tflops", type=float, help="the roofline's compute ceiling (dense 16-bit TFLOP/s)")
    ap.add_argument("--bandwidth-tbs", type=float, help="the roofline's memory ceiling (TB/s)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--compare", action="store_true",
                      help="compare two CSVs on the commands they share, even when their lists differ")
    mode.add_argument("--merge", action="store_true", help="read two CSVs of one list as one run, not compared")
    ap.add_argument("--top", type=int, default=15, help="lines in each of the slowest/fastest tables (default 15)")
    args = ap.parse_args(argv)
    for name in ("peak_tflops", "bandwidth_tbs"):
        v = getattr(args, name)
        if v is not None and not v > 0:
            ap.error(f"--{name.replace('_', '-')} must be positive, got {v:g}")
    if args.top < 1:
        ap.error(f"--top must be at least 1, got {args.top}")
    if args.compare and len(args.csv) != 2:
        ap.error(f"--compare takes exactly two CSVs, got {len(args.csv)}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        import matplotlib  # noqa: F401  (the figures need it; say so before reading anything)
    except ImportError as e:
        sys.stderr.write(f"boo report: matplotlib is not installed for {sys.executable} ({e}): install it with "
                         f"'{sys.executable} -m pip install {MATPLOTLIB_PIN}', or set BOO_PYTHON to a Python "
                         "that has it\n")
        return 2
    from . import report, runs, summary
    try:
        loaded = [runs.read_csv(p) for p in args.csv]
        before = None
        if len(loaded) == 2 and not args.merge and (args.compare or summary.same_list(*loaded)):
            before, run = loaded
        else:
            run = runs.merge(loaded)
        r = report.build(run, args, before)
        written = report.write(r, args.output, args.png_dir)
    except runs.ReportError as e:
        sys.stderr.write(f"boo report: {e}\n")
        return 2
    except OSError as e:
        sys.stderr.write(f"boo report: cannot write {e.filename}: {e.strerror}\n")
        return 1
    print("boo report: wrote " + ", ".join(written))
    return 0
