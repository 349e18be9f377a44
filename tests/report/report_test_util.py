"""What tests/report's scripts share: running the report and reading its numbers back from the HTML."""
import html.parser
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(HERE, "fixtures")
REPORT = os.path.join(ROOT, "tools", "report", "boo_report")


def fixture(name):
    return os.path.join(FIXTURES, name)


def run_report(args, env=None, python=None):
    """`python3 tools/report/boo_report ARGS` (what `boo report` execs): (exit code, stdout, stderr)."""
    p = subprocess.run([python or sys.executable, REPORT, *args], capture_output=True, text=True, env=env,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


class KeyedCells(html.parser.HTMLParser):
    """data-key -> the text of the element carrying it (the page's summary numbers)."""

    def __init__(self):
        super().__init__()
        self.values = {}
        self._open = []  # [key, tag, text] of the keyed elements being read
        self.urls = []  # every src/href, to check that nothing is fetched

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("src", "href"):
            if name in a:
                self.urls.append(a[name])
        if "data-key" in a:
            self._open.append([a["data-key"], tag, ""])

    def handle_data(self, data):
        for entry in self._open:
            entry[2] += data

    def handle_endtag(self, tag):
        if self._open and self._open[-1][1] == tag:
            key, _, text = self._open.pop()
            self.values[key] = text.strip()


def read_keys(path):
    parser = KeyedCells()
    with open(path, encoding="utf-8") as f:
        parser.feed(f.read())
    return parser
