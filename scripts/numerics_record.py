#!/usr/bin/env python3
"""The record of a --verify-numerics run, to commit under docs/perf/: for each
command list, the commands it holds, how many passed, failed, were
unsupported, or left no result (a run cut off by a timeout or a crash), and
every failing line with its reason, from the driver's CSV (--csv --csv-extra).

usage: numerics_record.py [--commit C] [--device D] [--date YYYY-MM-DD] [--title T] [--out FILE]
                          LIST.txt=RESULT.csv [...]

Exit status: 0 when every command of every list passed or is unsupported, 1
otherwise (a failure, a shortfall, or rows that match no command), 2 for bad
arguments or unreadable files.
"""
import argparse
import collections
import csv
import datetime
import os
import sys


def commands_of(path):
    """The command lines of a list as the driver reads them: blank lines and '#' comments skipped."""
    with open(path) as f:
        return [(n, line.strip()) for n, line in enumerate(f, 1) if line.strip() and not line.strip().startswith("#")]


def classify(row):
    error = row.get("error", "")
    if row.get("numerics_pass") == "PASS" and not error:
        return "pass"
    if error.startswith("UNIMPLEMENTED"):
        return "unsupported"
    return "fail"


def record(list_path, csv_path):
    """Counts and failures of one list. The driver writes one row per command in the list's order, its
    text the line as written plus any words appended to every line (-t 0): rows are matched in order."""
    commands = commands_of(list_path)
    rows = []
    if os.path.exists(csv_path):
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
    if rows and "numerics_pass" not in rows[0]:
        raise ValueError(f"{csv_path} has no numerics_pass column: was the run made with --verify-numerics?")
    if rows and "error" not in rows[0]:
        raise ValueError(f"{csv_path} has no error column: was the run made with --csv-extra?")
    counts = collections.Counter()
    problems = []
    next_row = 0
    for line_number, text in commands:
        row = rows[next_row] if next_row < len(rows) else None
        if row is None or not (row["arguments"] == text or row["arguments"].startswith(text + " ")):
            counts["no result"] += 1
            problems.append((line_number, text, "no result (the run was cut off, or the command crashed it)"))
            continue
        next_row += 1
        outcome = classify(row)
        counts[outcome] += 1
        if outcome == "fail":
            problems.append((line_number, text, row.get("error") or "numerics: FAIL"))
    extra = len(rows) - next_row
    if extra:
        problems.append((0, "", f"{extra} CSV rows match no command of {list_path} in order"))
    ok = counts["fail"] == 0 and counts["no result"] == 0 and extra == 0
    return {"list": list_path, "csv": csv_path, "commands": len(commands), "counts": counts, "problems": problems,
            "extra": extra, "ok": ok}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pairs", nargs="+", metavar="LIST=CSV")
    ap.add_argument("--commit", default=os.environ.get("BOO_GIT_COMMIT", "unknown"))
    ap.add_argument("--device", default="unknown device")
    ap.add_argument("--date", default=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    ap.add_argument("--title", default="--verify-numerics")
    ap.add_argument("--out", help="write the record here as well as to stdout")
    args = ap.parse_args()
    records = []
    for pair in args.pairs:
        if "=" not in pair:
            print(f"numerics_record.py: '{pair}': expected LIST.txt=RESULT.csv", file=sys.stderr)
            return 2
        list_path, csv_path = pair.split("=", 1)
        try:
            records.append(record(list_path, csv_path))
        except (OSError, ValueError, KeyError) as e:
            print(f"numerics_record.py: {e}", file=sys.stderr)
            return 2
    lines = [f"## Numerics: {args.title} ({args.device}, commit {args.commit}, {args.date})", "",
             "| list | commands | pass | fail | unsupported | no result | verdict |", "|---|---|---|---|---|---|---|"]
    for r in records:
        c = r["counts"]
        lines.append(f"| `{r['list']}` | {r['commands']} | {c['pass']} | {c['fail']} | {c['unsupported']} | "
                     f"{c['no result']} | {'PASS' if r['ok'] else 'FAIL'} |")
    for r in records:
        if r["problems"]:
            lines += ["", f"Failures in `{r['list']}` ({len(r['problems'])}):"]
            lines += [f"- line {n}: `{t}`: {why}" if n else f"- {why}" for n, t, why in r["problems"][:50]]
            if len(r["problems"]) > 50:
                lines.append(f"- ... and {len(r['problems']) - 50} more (the CSV has them all)")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0 if all(r["ok"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
