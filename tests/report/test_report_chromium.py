"""boo report's page in headless Chromium (Debian's chromium, scripts/install-deps.sh): it renders with no
console message (the page has no script, so any is an error: a blocked or failed load, a bad data: URI),
fetches nothing, and its screenshot is a page, not a blank: the text and both figures drawn.
Exits 77 (skipped) only where no chromium is installed."""
import os
import shutil
import subprocess
import sys
import tempfile

from report_test_util import fixture, read_keys, run_report

try:
    from PIL import Image  # matplotlib's own dependency
except ImportError:
    sys.exit(f"report.chromium: Pillow (with matplotlib) is not installed for {sys.executable}: run "
             "scripts/install-deps.sh and configure with -DPython3_EXECUTABLE=.venv/bin/python")


def fail(message):
    print(f"report.chromium: FAIL: {message}")
    sys.exit(1)


def main():
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser") if shutil.which(b)), None)
    if browser is None:
        print("report.chromium: SKIPPED: no chromium on this machine (scripts/install-deps.sh installs Debian's "
              "chromium where apt can)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "report.html")
        code, _, stderr = run_report([fixture("413-numerics-h100-9bd67eb.csv"), "-o", page])
        if code:
            fail(f"the report failed: {stderr}")
        for url in read_keys(page).urls:
            if not url.startswith("data:"):
                fail(f"the page loads {url[:100]}")
        shot = os.path.join(tmp, "shot.png")
        # A proxy that refuses everything: were anything fetched, it would fail and say so on the console.
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--proxy-server=127.0.0.1:9", "--enable-logging=stderr", "--v=0", f"--user-data-dir={tmp}/profile",
               "--window-size=1280,2600", f"--screenshot={shot}", "file://" + page]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        console = [ln for ln in p.stderr.splitlines() if ":CONSOLE" in ln]
        if console:
            fail("console messages:\n" + "\n".join(console))
        if not os.path.exists(shot):
            fail(f"no screenshot (exit {p.returncode}):\n{p.stderr[-3000:]}")
        image = Image.open(shot).convert("RGB")
        if image.size != (1280, 2600):
            fail(f"screenshot is {image.size}, expected (1280, 2600)")
        gray = image.convert("L")
        pixels = gray.tobytes()
        mean = sum(pixels) / len(pixels)
        variance = sum((v - mean) ** 2 for v in pixels) / len(pixels)
        inked = sum(v < 200 for v in pixels) / len(pixels)
        # The roofline's blue and orange points (the page's own text is black, grey, red and green).
        rgb = image.tobytes()
        marks = sum(1 for r, g, b in zip(rgb[0::3], rgb[1::3], rgb[2::3])
                    if (b > 150 and b > r + 60 and b > g + 30) or (r > 200 and 100 < g < 170 and b < 80))
        print(f"report.chromium: screenshot {image.size}, gray variance {variance:.0f}, {100 * inked:.1f}% inked, "
              f"{marks} pixels of roofline points")
        if variance < 200 or inked < 0.02:
            fail("the screenshot is blank or nearly so")
        if marks < 300:
            fail("no roofline points in the screenshot: the embedded figures did not render")
    print("report.chromium: the report renders in headless Chromium, no console message, nothing fetched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
