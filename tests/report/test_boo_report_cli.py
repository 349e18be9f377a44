"""`boo report` through the C++ CLI: it finds tools/report/boo_report beside the build tree's boo and execs
Python on it (BOO_PYTHON, else python3); a missing interpreter or package is a clear error.

    test_boo_report_cli.py PATH/TO/boo
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from report_test_util import fixture

BOO = sys.argv.pop(1) if len(sys.argv) > 1 else None


def boo(*args, python=sys.executable):
    env = dict(os.environ, BOO_PYTHON=python) if python else {k: v for k, v in os.environ.items() if k != "BOO_PYTHON"}
    p = subprocess.run([BOO, *args], capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, p.stdout, p.stderr


class BooReportCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_writes_report_and_pngs(self):
        out = os.path.join(self.tmp.name, "r.html")
        pngs = os.path.join(self.tmp.name, "png")
        code, stdout, stderr = boo("report", fixture("nchw-models-h100-d8ec4ad.csv"),
                                   fixture("nchw-models-h100-923b472.csv"), "-o", out, "--png-dir", pngs)
        self.assertEqual(code, 0, stderr)
        self.assertIn("boo report: wrote", stdout)
        with open(out, encoding="utf-8") as f:
            self.assertIn("Before / after", f.read())
        self.assertEqual(sorted(os.listdir(pngs)), ["ratios.png", "roofline.png", "speedup.png"])

    def test_usage_errors(self):
        code, _, stderr = boo("report")
        self.assertEqual(code, 2)
        self.assertIn("usage: boo report", stderr)
        code, stdout, _ = boo("--help")
        self.assertEqual(code, 0)
        self.assertIn("report RUN.csv", stdout)

    def test_no_python(self):
        missing = os.path.join(self.tmp.name, "no-such-python3")
        code, _, stderr = boo("report", fixture("nchw-models-h100-d8ec4ad.csv"), "-o", "x.html", python=missing)
        self.assertEqual(code, 2)
        self.assertIn(f"cannot run '{missing}'", stderr)
        self.assertIn("set BOO_PYTHON", stderr)

    def test_no_package(self):
        # A boo with no share/boo/report beside it.
        lone = os.path.join(self.tmp.name, "bin", "boo")
        os.makedirs(os.path.dirname(lone))
        shutil.copy(BOO, lone)
        p = subprocess.run([lone, "report", "x.csv", "-o", "x.html"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("the report's Python package is missing", p.stderr)


if __name__ == "__main__":
    if not BOO:
        sys.exit("usage: test_boo_report_cli.py PATH/TO/boo")
    unittest.main()
