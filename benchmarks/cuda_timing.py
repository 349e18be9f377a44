"""The benchmarks' GPU timer: CUDA events around back-to-back calls."""
import torch


def gpu_us(fn, iters, warmup=3):
    """Mean GPU time of fn() in microseconds over `iters` back-to-back calls, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000.0 / iters
