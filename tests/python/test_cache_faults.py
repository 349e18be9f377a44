"""The kernel cache under faults (label nvrtc: compiles with NVRTC, needs no GPU).

Run by ctest as: python3 tests/python/test_cache_faults.py <boo> <repo root>
Each check names the boo command it runs, so a failure can be re-run by hand.
"""
import glob
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

ACTS = ["none", "relu", "sigmoid", "tanh", "silu", "gelu", "gelu_tanh", "leaky_relu:0.1", "clamp:0:6"]


def many_modules_workload(path):
    """Commands that need 54 distinct conv modules (dtype x activation x bias)."""
    lines = []
    for dtype in ["conv", "convfp16", "convbfp16"]:
        for act in ACTS:
            for bias in ["0", "1"]:
                lines.append(f"{dtype} -n 1 -c 4 -H 6 -W 6 -k 4 -F 1 -b {bias} --activation {act}")
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    return r


def summary(r):
    """(compiled, cached, failed) from preload's summary line."""
    for line in r.stdout.splitlines():
        if line.startswith("compiled="):
            parts = dict(p.split("=") for p in line.split())
            return int(parts["compiled"]), int(parts["cached"]), int(parts["failed"])
    raise AssertionError(f"no summary line:\n{r.stdout}\n{r.stderr}")


def entries(cache):
    return sorted(glob.glob(f"{cache}/v1/*/*/*.json"))


def preload(boo, workload, cache, jobs=2):
    return run([boo, "preload", "--commands-file", str(workload), "--arch", "sm_90a", "--cache-dir", str(cache),
                "-j", str(jobs)])


def verify(boo, cache):
    return run([boo, "cache", "verify", "--cache-dir", str(cache)])


def test_preload_twice(boo, root, tmp):
    cache = tmp / "sample-cache"
    first = preload(boo, root / "workloads" / "boo-sample.txt", cache)
    compiled, cached, failed = summary(first)
    assert first.returncode == 0 and compiled > 0 and cached == 0 and failed == 0, first.stdout + first.stderr
    second = preload(boo, root / "workloads" / "boo-sample.txt", cache)
    assert summary(second) == (0, compiled, 0), second.stdout
    assert "compile time per module: median" in first.stdout
    assert verify(boo, cache).returncode == 0


def test_kill_half_way_then_rerun(boo, tmp):
    cache = tmp / "killed-cache"
    workload = tmp / "many.txt"
    modules = many_modules_workload(workload)
    proc = subprocess.Popen([boo, "preload", "--commands-file", str(workload), "--arch", "sm_90a", "--cache-dir",
                             str(cache), "-j", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while len(entries(cache)) < 5 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(entries(cache))
    assert 0 < done < modules, f"kill came too late or too early: {done} of {modules} stored"
    # Whatever the kill left (an artifact without metadata, a temporary file)
    # is never a bad entry that verify would keep failing on after a rerun.
    rerun = preload(boo, workload, cache)
    compiled, cached, failed = summary(rerun)
    assert failed == 0 and cached == done and compiled == modules - done, rerun.stdout
    v = verify(boo, cache)
    assert v.returncode == 0, v.stdout
    assert len(entries(cache)) == modules


def test_corrupt_entries_are_recompiled(boo, tmp):
    cache = tmp / "corrupt-cache"
    workload = tmp / "many.txt"
    modules = many_modules_workload(workload)
    assert summary(preload(boo, workload, cache))[0] == modules
    jsons = entries(cache)
    cubin = lambda j: j[:-5] + ".cubin"
    # 1: truncated artifact; 2: one flipped byte; 3: garbage metadata; 4: artifact gone; 5: truncated metadata.
    with open(cubin(jsons[0]), "r+b") as f:
        f.truncate(100)
    with open(cubin(jsons[1]), "r+b") as f:
        data = bytearray(f.read())
        data[len(data) // 2] ^= 0xFF
        f.seek(0)
        f.write(data)
    pathlib.Path(jsons[2]).write_text("not json at all")
    os.remove(cubin(jsons[3]))
    text = pathlib.Path(jsons[4]).read_text()
    pathlib.Path(jsons[4]).write_text(text[: len(text) // 2])
    v = verify(boo, cache)
    assert v.returncode == 1 and "5 bad" in v.stdout, v.stdout
    rerun = preload(boo, workload, cache)
    assert summary(rerun) == (5, modules - 5, 0), rerun.stdout + rerun.stderr
    assert "unusable" in rerun.stderr and "recompiling" in rerun.stderr, rerun.stderr
    assert verify(boo, cache).returncode == 0


def test_eight_processes_at_once(boo, tmp):
    cache = tmp / "shared-cache"
    workload = tmp / "many.txt"
    modules = many_modules_workload(workload)
    procs = [subprocess.Popen([boo, "preload", "--commands-file", str(workload), "--arch", "sm_90a", "--cache-dir",
                               str(cache), "-j", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, out + err
        assert summary(subprocess.CompletedProcess([], 0, out, err))[2] == 0
    assert len(entries(cache)) == modules, "each kernel must be stored exactly once"
    assert len(glob.glob(f"{cache}/v1/*/*/*.cubin")) == modules
    assert not glob.glob(f"{cache}/v1/*/*/*.tmp.*"), "temporary files left behind"
    assert verify(boo, cache).returncode == 0


def test_unwritable_cache(boo, root, tmp):
    # A cache folder that cannot be created (its parent is a file) stops even root. Filling the cache is
    # preload's work: every module it could not store is a failure, and the exit status says so (it was 0).
    blocker = tmp / "a-file"
    blocker.write_text("")
    r = preload(boo, root / "workloads" / "boo-sample.txt", blocker / "cache")
    compiled, cached, failed = summary(r)
    assert r.returncode == 1 and compiled == 0 and cached == 0 and failed > 0, r.stdout + r.stderr
    assert "compiled, but not cached" in r.stdout, r.stdout
    assert r.stderr.count("cannot write the kernel cache") == 1, r.stderr
    if os.geteuid() != 0:
        ro = tmp / "read-only"
        ro.mkdir()
        ro.chmod(0o555)
        r = preload(boo, root / "workloads" / "boo-sample.txt", ro)
        assert r.returncode == 1 and "cannot write the kernel cache" in r.stderr, r.stderr


def test_special_files(boo, tmp):
    # Issue #22, defects 7-9: FIFOs, devices, links and folders where the cache expects its files are
    # reported by every command, never followed, never waited on, never replaced, and nothing is written
    # outside the cache folder.
    cache = tmp / "special-cache"
    workload = tmp / "one-module.txt"
    workload.write_text("conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 1\n")
    assert preload(boo, workload, cache).returncode == 0
    (json,) = entries(cache)
    cubin = pathlib.Path(json[:-5] + ".cubin")
    explain = [boo, "explain", "conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 1", "--arch", "sm_90a", "--cache-dir", str(cache)]
    # A FIFO named as the artifact hung verify, ls, explain and preload.
    cubin.unlink()
    os.mkfifo(cubin)
    for args in [[boo, "cache", "verify", "--cache-dir", str(cache)], [boo, "cache", "ls", "--cache-dir", str(cache)],
                 explain]:
        r = run(args, timeout=60)
        assert "is a FIFO, not a regular file" in r.stdout + r.stderr, (args, r.stdout, r.stderr)
    r = run([boo, "cache", "verify", "--cache-dir", str(cache)], timeout=60)
    assert r.returncode == 1 and "1 bad" in r.stdout, r.stdout
    r = run(["timeout", "120", boo, "preload", "--commands-file", str(workload), "--arch", "sm_90a",
             "--cache-dir", str(cache)])
    assert r.returncode == 1 and "is a FIFO; the cache replaces only regular files" in r.stdout, r.stdout + r.stderr
    assert stat.S_ISFIFO(os.lstat(cubin).st_mode)  # reported, not removed
    # A link to /dev/zero made verify read until bad_alloc.
    cubin.unlink()
    cubin.symlink_to("/dev/zero")
    r = run([boo, "cache", "verify", "--cache-dir", str(cache)], timeout=60)
    assert r.returncode == 1 and "is a symbolic link, not a regular file" in r.stdout, r.stdout
    cubin.unlink()
    # Folders and stray files where entries belong; a .json folder passed verify.
    os.mkdir(cubin.parent / "ffff.json")
    (cubin.parent / "stray.txt").write_text("")
    r = run([boo, "cache", "verify", "--cache-dir", str(cache)], timeout=60)
    assert r.returncode == 1 and "ffff.json: a folder where the cache holds only" in r.stdout, r.stdout
    assert "stray.txt: not a file the cache writes" in r.stdout, r.stdout
    # An arch folder linked out of the cache: preload wrote into the link's target and ls/verify saw nothing.
    linked = tmp / "linked-cache"
    outside = tmp / "outside"
    outside.mkdir()
    (linked / "v1").mkdir(parents=True)
    (linked / "v1" / "sm_90a").symlink_to(outside)
    r = preload(boo, workload, linked)
    assert r.returncode == 1 and "sm_90a is a symbolic link, not a folder" in r.stdout, r.stdout + r.stderr
    assert list(outside.iterdir()) == []
    for sub in ["verify", "stat"]:
        r = run([boo, "cache", sub, "--cache-dir", str(linked)])
        assert "1 bad" in r.stdout and (sub != "verify" or r.returncode == 1), (sub, r.stdout)
    # A cache folder that is a file: "verified 0 entries", exit 0.
    env = dict(os.environ, BOO_CACHE_DIR=str(workload))
    r = run([boo, "cache", "verify"], env=env)
    assert r.returncode == 1 and "is a regular file, not a folder" in r.stderr, r.stdout + r.stderr
    # A folder given as the commands file: "0 signatures", exit 0.
    r = run([boo, "preload", "--commands-file", str(tmp), "--arch", "sm_90a", "--cache-dir", str(cache)])
    assert r.returncode == 2 and "is a folder, not a file" in r.stderr, r.stdout + r.stderr


def test_ls_stat_clear(boo, root, tmp):
    cache = tmp / "sample-cache"  # filled by test_preload_twice
    ls = run([boo, "cache", "ls", "--cache-dir", str(cache)])
    # The sample's forward and backward-data convs run on the Hopper tier.
    assert ls.returncode == 0 and "gpu:conv:wgmma_sm90" in ls.stdout and "sm_90a" in ls.stdout, ls.stdout
    stat = run([boo, "cache", "stat", "--cache-dir", str(cache)])
    assert "compile time: median" in stat.stdout and "(0 bad)" in stat.stdout, stat.stdout
    explain = run([boo, "explain", "convbfp16 -n 128 -c 384 -H 24 -W 48 -k 384 -y 1 -x 1 -F 1", "--arch", "sm_90a",
                   "--cache-dir", str(cache)])
    assert "<- chosen" in explain.stdout and "cache key:" in explain.stdout, explain.stdout
    assert run([boo, "cache", "clear", "--cache-dir", str(cache)]).returncode == 0
    assert not entries(cache)


def test_save_temps(boo, tmp):
    temps = tmp / "temps"
    workload = tmp / "one.txt"
    workload.write_text("convbfp16 -n 1 -c 8 -H 6 -W 6 -k 8 -F 1 -b 1 --activation gelu --in_layout NHWC\n")
    env = dict(os.environ, BOO_SAVE_TEMPS=str(temps))
    r = run([boo, "preload", "--commands-file", str(workload), "--arch", "sm_90a", "--cache-dir", str(tmp / "st-cache")],
            env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    (kernel_dir,) = glob.glob(f"{temps}/conv_2d_bfloat16_forward_b_*/gpu_conv_implicit_gemm_*")
    files = set(os.listdir(kernel_dir))
    for f in ["conv_implicit_gemm.cu", "nvrtc_options.txt", "compile.log", "kernel.ptx", "kernel.cubin",
              "key_record.txt", "command.txt"]:
        assert f in files and os.path.getsize(os.path.join(kernel_dir, f)) > 0, (f, files)
    assert ".entry boo_igemm_y" in pathlib.Path(kernel_dir, "kernel.ptx").read_text()
    command = pathlib.Path(kernel_dir, "command.txt").read_text()
    assert command.startswith("boo-driver convbfp16 ") and "--activation gelu" in command, command
    if shutil.which("cuobjdump"):
        assert "kernel.sass" in files


def main():
    boo, root = sys.argv[1], pathlib.Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        test_preload_twice(boo, root, tmp)
        test_kill_half_way_then_rerun(boo, tmp)
        test_corrupt_entries_are_recompiled(boo, tmp)
        test_eight_processes_at_once(boo, tmp)
        test_unwritable_cache(boo, root, tmp)
        test_special_files(boo, tmp)
        test_ls_stat_clear(boo, root, tmp)
        test_save_temps(boo, tmp)
    print("cache survives faults")


if __name__ == "__main__":
    main()
