"""boo report's numbers against the fixture CSVs: every geomean, count and pass rate the page prints is
computed here again from the CSV with nothing of the report's code, and must match what the HTML says."""
import csv
import math
import os
import re
import statistics
import sys
import tempfile
import unittest

from report_test_util import fixture, read_keys, run_report

try:
    import matplotlib  # noqa: F401
except ImportError:
    sys.exit(f"report.numbers: matplotlib is not installed for {sys.executable}: run scripts/install-deps.sh and "
             "configure with -DPython3_EXECUTABLE=.venv/bin/python")

NUMERICS = "413-numerics-h100-9bd67eb.csv"
BEFORE, AFTER = "nchw-models-h100-d8ec4ad.csv", "nchw-models-h100-923b472.csv"
NORMS = "norms-boo-cudnn-h200-d980bcb.csv"
DIRECTION_NAMES = {"1": "F1 fwd", "2": "F2 bwd data", "4": "F4 bwd weight"}


def rows(name):
    with open(fixture(name), newline="") as f:
        return list(csv.DictReader(f))


def value(cell):
    try:
        return float(cell)
    except ValueError:
        return None


def ratio(row):
    b, v = value(row["boo mean"]), value(row["cudnn mean"])
    return b / v if b is not None and v is not None else None


def gm(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def conv_direction(command):
    m = re.search(r"(?:-F|--forw) (\d)", command)
    return DIRECTION_NAMES[m.group(1)]


class ReportNumbers(unittest.TestCase):
    def report(self, *names, extra=()):
        out = os.path.join(self.tmp.name, "report.html")
        code, stdout, stderr = run_report([*(fixture(n) for n in names), "-o", out,
                                           "--png-dir", os.path.join(self.tmp.name, "png"), *extra])
        self.assertEqual(code, 0, stderr)
        self.assertIn("wrote", stdout)
        return read_keys(out), out

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def assertRatio(self, shown, expected, digits=3):
        self.assertAlmostEqual(float(shown), expected, delta=0.5 * 10 ** -digits + 1e-12)

    def test_geomeans_and_counts(self):
        keys, out = self.report(NUMERICS)
        data = rows(NUMERICS)
        ratios = [r for r in map(ratio, data) if r is not None]
        self.assertEqual(len(ratios), 26)
        self.assertRatio(keys.values["geomean:all"], gm(ratios))
        self.assertEqual(keys.values["faster:all"], f"{sum(r < 1 for r in ratios)}/26")
        self.assertRatio(keys.values["worst:all"], max(ratios), 2)
        self.assertRatio(keys.values["best:all"], min(ratios), 2)
        self.assertEqual(keys.values["lines:without-result"], "1")
        by_direction, by_layout = {}, {}
        for row in data:
            r = ratio(row)
            if r is None:
                continue
            by_direction.setdefault(conv_direction(row["arguments"]), []).append(r)
            by_layout.setdefault(re.search(r"--in_layout (\w+)", row["arguments"]).group(1), []).append(r)
        self.assertEqual(set(by_direction), {"F1 fwd", "F2 bwd data", "F4 bwd weight"})
        for d, rs in by_direction.items():
            self.assertRatio(keys.values[f"geomean:direction:{d}"], gm(rs))
            self.assertEqual(keys.values[f"faster:direction:{d}"], f"{sum(r < 1 for r in rs)}/{len(rs)}")
        for layout, rs in by_layout.items():
            self.assertRatio(keys.values[f"geomean:layout:{layout}"], gm(rs))
            for d in DIRECTION_NAMES.values():
                group = [ratio(row) for row in data if ratio(row) is not None and conv_direction(row["arguments"]) == d
                         and f"--in_layout {layout} " in row["arguments"]]
                self.assertRatio(keys.values[f"geomean:group:convbfp16 {layout} {d}"], gm(group))
        self.assertRatio(keys.values["geomean:op:convbfp16"], gm(ratios))
        worst_group = max((gm(rs), f"convbfp16 {layout} {d}") for layout in by_layout for d in DIRECTION_NAMES.values()
                          for rs in [[ratio(row) for row in data if ratio(row) is not None
                                      and conv_direction(row["arguments"]) == d
                                      and f"--in_layout {layout} " in row["arguments"]]])
        self.assertRatio(keys.values["worst-group"], worst_group[0], 2)
        with open(out, encoding="utf-8") as f:
            self.assertIn(f"worst group: {worst_group[1]}", f.read())

    def test_numerics(self):
        keys, _ = self.report(NUMERICS)
        verdicts = [row["numerics_pass"] for row in rows(NUMERICS)]
        passed, failed = verdicts.count("PASS"), verdicts.count("FAIL")
        self.assertEqual((passed, failed), (24, 2))
        self.assertEqual(keys.values["numerics:pass-of-judged"], f"{passed}/{passed + failed}")
        self.assertEqual(keys.values["numerics:failed"], str(failed))
        self.assertEqual(keys.values["numerics:not-judged"], str(verdicts.count("N.A.")))

    def test_roofline_fraction_and_metadata(self):
        # The H200 of the file name: 777 TFLOP/s and 4.1 TB/s; the commit from the CSV's commit column.
        keys, out = self.report(NORMS)
        fractions = []
        for row in rows(NORMS):
            flops, nbytes, t = float(row["flop_count"]), float(row["min_bytes"]), float(row["boo mean"])
            fractions.append(flops / (t * 1e-6) / 1e12 / min(777.0, flops / nbytes * 4.1))
        self.assertEqual(keys.values["roof:boo"], f"{100 * statistics.median(fractions):.0f}%")
        vendor = [float(r["flop_count"]) / (float(r["cudnn mean"]) * 1e-6) / 1e12 /
                  min(777.0, float(r["flop_count"]) / float(r["min_bytes"]) * 4.1) for r in rows(NORMS)]
        self.assertEqual(keys.values["roof:vendor"], f"{100 * statistics.median(vendor):.0f}%")
        self.assertRatio(keys.values["geomean:all"], gm([ratio(r) for r in rows(NORMS)]))
        self.assertRatio(keys.values["geomean:direction:F14"],
                         gm([ratio(r) for r in rows(NORMS) if r["arguments"].endswith("-F 14")]))
        with open(out, encoding="utf-8") as f:
            page = f.read()
        self.assertIn("d980bcb (CSV)", page)
        self.assertIn("H200 (file name)", page)
        # --peak-tflops/--bandwidth-tbs override the device's ceilings.
        keys, _ = self.report(NORMS, extra=("--peak-tflops", "1000", "--bandwidth-tbs", "2"))
        fractions = [float(r["flop_count"]) / (float(r["boo mean"]) * 1e-6) / 1e12 /
                     min(1000.0, float(r["flop_count"]) / float(r["min_bytes"]) * 2) for r in rows(NORMS)]
        self.assertEqual(keys.values["roof:boo"], f"{100 * statistics.median(fractions):.0f}%")

    def test_before_after(self):
        keys, _ = self.report(BEFORE, AFTER)
        before, after = rows(BEFORE), rows(AFTER)
        self.assertEqual([r["arguments"] for r in before], [r["arguments"] for r in after])
        speedups = [float(b["boo mean"]) / float(a["boo mean"]) for b, a in zip(before, after)]
        drift = [float(b["cudnn mean"]) / float(a["cudnn mean"]) for b, a in zip(before, after)]
        self.assertRatio(keys.values["compare:speedup"], gm(speedups))
        self.assertRatio(keys.values["compare:vendor-drift"], gm(drift))
        self.assertEqual(keys.values["compare:faster"], f"{sum(s > 1.03 for s in speedups)}/12")
        self.assertEqual(keys.values["compare:slower"], f"{sum(s < 1 / 1.03 for s in speedups)}/12")
        self.assertRatio(keys.values["geomean:all"], gm([ratio(r) for r in after]))
        # --merge reads them as one run of 24 lines instead.
        keys, _ = self.report(BEFORE, AFTER, extra=("--merge",))
        self.assertNotIn("compare:speedup", keys.values)
        self.assertRatio(keys.values["geomean:all"], gm([ratio(r) for r in before + after]))

    def test_self_contained_and_pngs(self):
        keys, out = self.report(NUMERICS)
        self.assertTrue(keys.urls)
        for url in keys.urls:
            self.assertTrue(url.startswith("data:image/png;base64,"), url[:80])
        with open(out, encoding="utf-8") as f:
            page = f.read()
        self.assertNotRegex(page, r"https?://|url\(")
        for name in ("ratios.png", "roofline.png"):
            with open(os.path.join(self.tmp.name, "png", name), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_bad_input(self):
        bad = os.path.join(self.tmp.name, "bad.csv")
        with open(bad, "w") as f:
            f.write("shape,copy_us\n8192x768,5.1\n")
        code, _, err = run_report([bad, "-o", os.path.join(self.tmp.name, "x.html")])
        self.assertEqual(code, 2)
        self.assertIn("no 'arguments' column: expected a boo-driver CSV", err)
        code, _, err = run_report([os.path.join(self.tmp.name, "missing.csv"), "-o", "x.html"])
        self.assertEqual(code, 2)
        self.assertIn("missing.csv: cannot read", err)
        code, _, err = run_report([fixture(NORMS), "-o", "x.html", "--peak-tflops", "-3"])
        self.assertEqual(code, 2)
        self.assertIn("--peak-tflops must be positive", err)
        # A device boo does not know needs both ceilings.
        unknown = os.path.join(self.tmp.name, "run.csv")
        with open(fixture(NORMS)) as src, open(unknown, "w") as dst:
            dst.write(src.read())
        code, _, err = run_report([unknown, "-o", "x.html", "--peak-tflops", "500"])
        self.assertEqual(code, 2)
        self.assertIn("give both --peak-tflops and --bandwidth-tbs", err)

    def test_matplotlib_missing(self):
        # A matplotlib that fails to import stands first on the path.
        fake = os.path.join(self.tmp.name, "fake", "matplotlib")
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("raise ImportError('no matplotlib here')\n")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(fake))
        code, _, err = run_report([fixture(NORMS), "-o", os.path.join(self.tmp.name, "x.html")], env=env)
        self.assertEqual(code, 2)
        self.assertIn("matplotlib is not installed for", err)
        self.assertIn("pip install matplotlib==", err)


if __name__ == "__main__":
    unittest.main()
