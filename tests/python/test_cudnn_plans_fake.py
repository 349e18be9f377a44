"""cuDNN plans remembered across runs, on a stand-in for libcudnn (with the
fake libcuda): the first run searches each graph's engines and stores the
choice; the next builds the stored plan and searches nothing; --vendor-tune
searches again; an unusable entry is reported, searched again and repaired.

Run by ctest with BOO_CUDA_DRIVER_DIR and BOO_CUDNN_DIR naming the fakes, as:
python3 tests/python/test_cudnn_plans_fake.py <boo-driver>
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# Two signatures, three graphs: a forward, and a backward-data plus backward-weight (-F 6).
COMMANDS = ["conv -n 1 -c 8 -H 8 -W 8 -k 8 -F 1 -t 1 --iter 3",
            "conv -n 1 -c 8 -H 8 -W 8 -k 8 -F 6 -t 1 --iter 3"]


def run(driver, tmp, log_name, *extra):
    log = tmp / log_name
    env = dict(os.environ, FAKE_CUDNN_LOG=str(log))
    r = subprocess.run([driver, "--backend", "cudnn", "--cache-dir", str(tmp / "cache"),
                        "--commands-file", str(tmp / "commands.txt"), *extra],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    events = log.read_text().split("\n")[:-1] if log.exists() else []
    return r, events


def plan_files(tmp):
    return sorted((tmp / "cache" / "vendor-plans" / "cudnn").rglob("*.txt"))


def main():
    driver = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        (tmp / "commands.txt").write_text("\n".join(COMMANDS) + "\n")

        first, events = run(driver, tmp, "first.log")
        assert events.count("heuristics") == 3 and not any(e.startswith("engine") for e in events), events
        files = plan_files(tmp)
        assert len(files) == 3, files
        for f in files:
            text = f.read_text()
            assert text.startswith("boo vendor plan 1\nrecord: cudnn 91300 | "), text
            assert re.search(r"\nplan: engine [01] knobs 3=1[01]\n$", text), text
        assert re.search(r"vendor tuning \d+\.\d s", first.stdout), first.stdout

        # The next run builds the remembered engines and searches nothing.
        second, events = run(driver, tmp, "second.log")
        assert "heuristics" not in events, events
        remembered = sorted(re.search(r"plan: engine (\d)", f.read_text()).group(1) for f in files)
        assert sorted(e.split()[1] for e in events) == remembered, (events, remembered)
        assert second.stderr == "", second.stderr

        # --vendor-tune searches every graph again.
        _, events = run(driver, tmp, "retune.log", "--vendor-tune")
        assert events.count("heuristics") == 3, events

        # An unusable entry: reported, searched again, stored again.
        files[0].write_text("boo vendor plan 1\nrecord: truncat")
        r, events = run(driver, tmp, "repair.log")
        assert "is truncated or not a plan file; searching again" in r.stderr, r.stderr
        assert events.count("heuristics") == 1, events
        assert files[0].read_text().endswith("\n") and "plan: engine" in files[0].read_text()
        # A remembered engine that no longer builds (another cuDNN's index, say): searched again.
        text = files[0].read_text()
        files[0].write_text(re.sub(r"plan: engine \d", "plan: engine 7", text))
        r, events = run(driver, tmp, "stale.log")
        assert "does not build" in r.stderr and events.count("heuristics") == 1, (r.stderr, events)
    print("cuDNN plans are remembered, reused, retuned and repaired")


if __name__ == "__main__":
    main()
