#!/usr/bin/env python3
"""Mutation testing of boo's numerics checks: applies each mutation below, one at a
time, to a scratch copy of the source tree, builds the unit tests there and runs
them. A mutation is killed when a test fails; one that survives is a wrong
reference, verdict or tolerance that no test notices.

usage: scripts/mutate.py [--scratch DIR] [--report FILE] [--only NAME ...] [--jobs N]

The scratch copy (default build-mutate/) holds the tracked and untracked,
not-ignored files of this tree; its build uses ccache when it is installed
(CCACHE_BASEDIR is set to the tree's parent, so the copy shares the main
build's cache entries). Exit status: 0 when every mutation was killed, 1 when
any survived or no longer applies (its text is gone: update the mutation), 2 when
the unmutated tree fails to build or pass.
"""
import argparse
import datetime
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


class Mutation:
    def __init__(self, name, file, edits, what):
        self.name = name
        self.file = file
        self.edits = edits  # (original text, mutated text), each original found exactly once
        self.what = what


MUTATIONS = [
    # Issue 27's four survivors at 110543f.
    Mutation("blind-check-numerics", "src/bench/numerics_check.cpp", [
        ("        if (!c.pass()) tolerance_failures.push_back(c.summary());\n", ""),
        ("      const double v = out.load(base::offset_of_linear(out.spec(), positions[i]));",
         "      const double v = ref;"),
        ("        if (cmp.pass()) continue;\n        verdict.structured_ok = false;\n",
         "        if (cmp.pass()) continue;\n"),
    ], "check_numerics blinded: no per-element check, the reference compared with itself, the structured test "
       "always passing"),
    Mutation("bf16-mantissa-8-to-5", "src/bench/numerics.cpp", [
        ("if (dtype == DType::kBF16) mantissa_bits = 8;", "if (dtype == DType::kBF16) mantissa_bits = 5;"),
    ], "bf16 tolerance 8x looser (mantissa_bits 8 -> 5)"),
    Mutation("cancellation-allowance-x100", "src/bench/numerics.cpp", [
        ("return kCancellationUlps * std::ldexp(1.0, -24) * cancellation_scale;",
         "return 100 * kCancellationUlps * std::ldexp(1.0, -24) * cancellation_scale;"),
    ], "the cancellation allowance 100x larger"),
    Mutation("weight-at-no-group-offset", "src/ops/conv/conv_ref.cpp", [
        ("const int64_t ch = (kb / (b.c / rel.groups)) * f1 + c;", "const int64_t ch = c;"),
    ], "the sampled reference's weight_at without the group's channel offset"),
    # The blinded check's parts one at a time, and more of the verdict and the references.
    Mutation("no-per-element-check", "src/bench/numerics_check.cpp", [
        ("        if (!c.pass()) tolerance_failures.push_back(c.summary());\n", ""),
    ], "check_numerics drops the per-element tolerance's failures"),
    Mutation("reference-against-itself", "src/bench/numerics_check.cpp", [
        ("      const double v = out.load(base::offset_of_linear(out.spec(), positions[i]));",
         "      const double v = ref;"),
    ], "the statistical error sets compare the reference with itself"),
    Mutation("structured-test-always-passes", "src/bench/numerics_check.cpp", [
        ("        if (cmp.pass()) continue;\n        verdict.structured_ok = false;\n",
         "        if (cmp.pass()) continue;\n"),
    ], "the structured test passes whatever it finds"),
    Mutation("nan-pattern-ignored", "src/bench/verdict.cpp", [
        ("v.nan_ok = sets.boo_nan_mismatches == 0;", "v.nan_ok = true;"),
    ], "the verdict ignores NaN mismatches"),
    Mutation("spread-bound-x10", "src/bench/verdict.cpp", [
        ("v.stddev_ok = v.boo.stddev <= options.stddev_atol + tolerance_bound;",
         "v.stddev_ok = v.boo.stddev <= options.stddev_atol + 10 * tolerance_bound;"),
    ], "without a vendor, a spread 10x the documented tolerance passes"),
    Mutation("per-element-bound-x2", "src/bench/numerics.cpp", [
        ("if (ratio > 1) ++c.over_tolerance;", "if (ratio > 2) ++c.over_tolerance;"),
    ], "the per-element check allows twice its bound"),
    Mutation("nan-mismatch-not-counted", "src/bench/numerics.cpp", [
        ("        ++c.nan_mismatches;\n", ""),
    ], "the per-element check does not count NaN mismatches"),
    Mutation("accumulation-term-x2", "src/bench/numerics.cpp", [
        ("+ 8.0 * std::sqrt(k) * std::ldexp(1.0, -24);", "+ 16.0 * std::sqrt(k) * std::ldexp(1.0, -24);"),
    ], "the float32 accumulation term of rtol doubled"),
    Mutation("no-corner-samples", "src/bench/numerics.cpp", [
        ("    for (size_t d = 0; d < rank; ++d) index[d] = (mask >> d) & 1 ? shape[d] - 1 : 0;\n"
         "    out.push_back(linear_of(index));\n",
         "    for (size_t d = 0; d < rank; ++d) index[d] = (mask >> d) & 1 ? shape[d] - 1 : 0;\n"),
    ], "sampled checks leave out the corners"),
    Mutation("fixed-sample-seed", "src/bench/numerics.cpp", [
        ("return static_cast<int64_t>(base::splitmix64(seed ^ base::splitmix64(draws++))",
         "return static_cast<int64_t>(base::splitmix64(0x5eed ^ base::splitmix64(draws++))"),
    ], "sampled positions ignore the seed (the fixed positions of 110543f)"),
    Mutation("forward-at-no-group-offset", "src/ops/conv/conv_ref.cpp", [
        ("c0 = (kb / (cb / rel.groups)) * ca_per_group;", "c0 = 0;"),
    ], "the reference's forward face without the group's channel offset"),
    Mutation("data-at-ignores-stride", "src/ops/conv/conv_ref.cpp", [
        ("if (t < 0 || t % rel.stride[d] != 0) return -1;", "if (t < 0) return -1;"),
    ], "the reference's data face reads positions between strides"),
    Mutation("transposed-data-at-group", "src/ops/conv/conv_ref.cpp", [
        ("const int64_t g = ch / ca_per_group, c = ch % ca_per_group;",
         "const int64_t g = 0, c = ch % ca_per_group;"),
    ], "the reference's data face (transposed forward, backward data) always in group 0"),
]


def run(cmd, cwd, log, env=None):
    """Runs cmd; its output goes to log. Returns the exit status."""
    with open(log, "w") as out:
        return subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env).returncode


def copy_tree(scratch):
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    tree = scratch / "tree"
    for rel in filter(None, files):
        src, dst = ROOT / rel, tree / rel
        if not src.is_file():
            continue
        if dst.exists() and dst.read_bytes() == src.read_bytes():
            continue  # unchanged: keep its timestamp so ninja rebuilds nothing
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    return tree


def failing_tests(log):
    return sorted(set(re.findall(r"^\[  FAILED  \] (\S+\.\S+)(?: \(|,|$)", open(log).read(), re.M)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scratch", default=str(ROOT / "build-mutate"))
    ap.add_argument("--report", help="write the markdown report here (default: stdout only)")
    ap.add_argument("--only", nargs="*", help="run only these mutations")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--python", default=sys.executable, help="the Python CMake configures with")
    args = ap.parse_args()

    mutations = [m for m in MUTATIONS if not args.only or m.name in args.only]
    unknown = set(args.only or []) - {m.name for m in MUTATIONS}
    if unknown:
        sys.exit(f"mutate.py: unknown mutation(s) {', '.join(sorted(unknown))}; known: "
                 f"{', '.join(m.name for m in MUTATIONS)}")
    scratch = pathlib.Path(args.scratch).resolve()
    logs = scratch / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    tree = copy_tree(scratch)
    build = tree / "build"
    env = dict(os.environ)
    launcher = []
    if shutil.which("ccache"):
        env.setdefault("CCACHE_BASEDIR", str(ROOT.parent))
        launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    if run(["cmake", "-S", ".", "-B", "build", "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={args.python}", *launcher], tree, logs / "configure.log", env):
        sys.exit(f"mutate.py: configure failed, see {logs / 'configure.log'}")
    binary = build / "tests" / "boo_unit_tests"

    def build_and_test(tag):
        if run(["ninja", "-C", "build", f"-j{args.jobs}", "boo_unit_tests"], tree, logs / f"{tag}-build.log", env):
            return "build failed", []
        status = run([str(binary), "--gtest_brief=1"], tree, logs / f"{tag}-test.log", env)
        return ("killed" if status else "survived"), failing_tests(logs / f"{tag}-test.log")

    start = time.time()
    outcome, failures = build_and_test("baseline")
    if outcome != "survived":
        sys.exit(f"mutate.py: the unmutated tree {'fails to build' if outcome == 'build failed' else 'fails tests'} "
                 f"({', '.join(failures)}); see {logs}")
    results = []
    for m in mutations:
        path = tree / m.file
        original = path.read_text()
        mutated = original
        missing = [old for old, _ in m.edits if mutated.count(old) != 1]
        if missing:
            results.append((m, "not applicable", [f"text not found exactly once: {missing[0][:60]!r}"], 0.0))
            print(f"{m.name}: not applicable", flush=True)
            continue
        for old, new in m.edits:
            mutated = mutated.replace(old, new)
        t0 = time.time()
        path.write_text(mutated)
        try:
            outcome, failures = build_and_test(m.name)
        finally:
            path.write_text(original)
        results.append((m, outcome, failures, time.time() - t0))
        print(f"{m.name}: {outcome} ({len(failures)} failing tests)", flush=True)

    killed = sum(r[1] == "killed" for r in results)
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    lines = [f"# Mutation testing of the numerics checks ({datetime.date.today().isoformat()})", "",
             f"`scripts/mutate.py` at commit {commit}{' (with uncommitted changes)' if dirty else ''}: each mutation "
             "applied alone to a scratch copy, `boo_unit_tests` built and run (host only, no GPU). A mutation is "
             "killed when at least one test fails.", "",
             f"**Score: {killed} of {len(results)} killed** "
             f"({time.time() - start:.0f} s).", "",
             "| mutation | file | what it breaks | result | tests that failed |", "|---|---|---|---|---|"]
    for m, outcome, failures, _ in results:
        shown = ", ".join(f"`{f}`" for f in failures[:4]) + (f" and {len(failures) - 4} more" if len(failures) > 4 else "")
        lines.append(f"| `{m.name}` | `{m.file}` | {m.what} | {outcome} | {shown} |")
    lines += ["", "Not covered here: the GPU kernels' index math (mutating it needs a GPU to run the kernels; "
              "`BOO_TEST_FAULT` with `scripts/gpu-check.sh` shows the GPU numerics failing on wrong results instead)."]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.report:
        pathlib.Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.report).write_text(report)
    return 0 if killed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
