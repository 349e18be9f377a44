"""The benchmarks' GPU timer: CUDA events around back-to-back calls."""
import time

import torch

# The GPU waits this long (a sleep kernel) before the timed calls, so that the
# host has queued them all by the time they run: the events then time the
# kernels, not a host that launches them more slowly than they finish.
_HEAD_START_S = 0.05
_HEAD_START_CYCLES = 100_000_000  # about 50 ms at the H100's and H200's 1.98 GHz


def gpu_us(fn, iters, warmup=3):
    """Mean GPU time of fn() in microseconds over `iters` back-to-back calls, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    torch.cuda._sleep(_HEAD_START_CYCLES)
    host_start = time.perf_counter()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    host_s = time.perf_counter() - host_start
    torch.cuda.synchronize()
    if host_s > _HEAD_START_S:
        print(f"note: queuing {iters} calls took {host_s * 1e3:.1f} ms, longer than the GPU's head start: "
              "the time includes host gaps")
    return start.elapsed_time(end) * 1000.0 / iters
