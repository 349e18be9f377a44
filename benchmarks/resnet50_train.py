#!/usr/bin/env python3
"""ResNet-50 (channels_last, bf16 autocast) under torch.compile: boo's backend
against inductor. Trains --steps steps from the same initial weights on the
same synthetic batches with each backend and prints both loss curves, the
largest loss difference, the per-step training time and the inference time.

Run (GPU): python3 benchmarks/resnet50_train.py [--batch 64] [--steps 20] [--rounds 3]
                                                  [--backends inductor,boo_inductor,aot_eager]
                                                  [--mode reduce-overhead]
           A backend named boo_inductor+OP (or boo+OP) turns boo's OP on in the fusion schema, e.g.
           boo_inductor+batch_norm runs the batch norms on boo's kernels instead of inductor's fusions.
           python3 benchmarks/resnet50_train.py --grad-check   (one step's gradients per parameter: each
           backend's relative error against a float32 eager step, worst first)
           python3 benchmarks/resnet50_train.py --profile      (also each backend's GPU kernels of one inference
           batch and one training step, the most expensive first: where the time goes)
"""
import argparse
import copy
import time

import torch
import torch.nn as nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * self.expansion
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + (x if self.down is None else self.down(x)))


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, stride=2, padding=1))
        layers, cin = [], 64
        for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(blocks):
                layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
                cin = width * Bottleneck.expansion
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))


def print_kernel_profile(label, run, top=14):
    """GPU kernel time of one call of run(), grouped by kernel name, the largest first; then the host side:
    the call's wall time and the host operators with the most self CPU time (where the gaps between kernels
    come from)."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        start = time.perf_counter()
        run()
        torch.cuda.synchronize()
        wall = time.perf_counter() - start
    def gpu_us(e):  # PyTorch 2.4 renamed self_cuda_time_total
        return e.self_device_time_total if hasattr(e, "self_device_time_total") else e.self_cuda_time_total
    from torch.autograd import DeviceType
    events = prof.key_averages()
    # Kernels only: a host operator's entry carries its kernels' time too.
    kernels = [e for e in events if e.device_type == DeviceType.CUDA and gpu_us(e) > 0]
    total = sum(gpu_us(e) for e in kernels)
    print(f"  {label}: {total / 1e3:.2f} ms of GPU kernels in {sum(e.count for e in kernels)} launches, "
          f"{wall * 1e3:.2f} ms wall (profiled)")
    for e in sorted(kernels, key=lambda e: -gpu_us(e))[:top]:
        print(f"    {gpu_us(e) / 1e3:8.3f} ms {e.count:5d}x  {e.key[:110]}")
    # Where the GPU waited for the host: gaps between one kernel's end and the next one's start.
    spans = sorted((e.time_range.start, e.time_range.end, e.name) for e in prof.events()
                   if e.device_type == DeviceType.CUDA)
    gaps = sorted(((b[0] - a[1], a[2], b[2]) for a, b in zip(spans, spans[1:]) if b[0] > a[1]), reverse=True)
    print(f"  GPU idle between kernels: {sum(g[0] for g in gaps) / 1e3:.2f} ms in {len(gaps)} gaps, "
          f"{sum(g[0] for g in gaps if g[0] > 20) / 1e3:.2f} ms in gaps over 20 us; the longest:")
    for us, before, after in gaps[:8]:
        print(f"    {us / 1e3:8.3f} ms after {before[:60]} before {after[:60]}")
    host = [e for e in events if e.device_type == DeviceType.CPU and e.self_cpu_time_total > 0]
    print(f"  host: {sum(e.self_cpu_time_total for e in host) / 1e3:.2f} ms of self CPU time, the largest:")
    for e in sorted(host, key=lambda e: -e.self_cpu_time_total)[:top]:
        print(f"    {e.self_cpu_time_total / 1e3:8.3f} ms {e.count:5d}x  {e.key[:110]}")


def compile_with(model, backend, mode):
    """torch.compile with `backend`, where NAME+OP+... is boo's NAME backend with those ops of its fusion
    schema turned on; `mode` is torch.compile's (None: the default)."""
    if "+" in backend:
        import boo
        name, *ops = backend.split("+")
        backend = boo.backend("inductor" if name == "boo_inductor" else "eager", {op: True for op in ops})
    return torch.compile(model, backend=backend, mode=mode)


class Trainer:
    """One backend's compiled model, its optimizer, and the losses and step times it has trained so far."""

    def __init__(self, model, backend, mode=None):
        self.model, self.backend, self.mode = model, backend, mode
        self.compiled = compile_with(model, backend, mode)
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        self.losses, self.times = [], []

    def train(self, batches, steps):
        for _ in range(steps):
            x, target = batches[len(self.losses) % len(batches)]
            torch.cuda.synchronize()
            start = time.perf_counter()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(self.compiled(x), target)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            torch.cuda.synchronize()
            self.times.append(time.perf_counter() - start)
            self.losses.append(loss.item())

    def profile_step(self, batch):
        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(self.compiled(batch[0]), batch[1])
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
        print_kernel_profile(f"{self.backend} training step (forward and backward, no optimizer)", step)

    def inference(self, batch, profile=False):
        """Seconds per batch of eval-mode inference (compiled again: eval's graph differs)."""
        self.model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            infer = compile_with(self.model, self.backend, self.mode)
            for _ in range(3):
                infer(batch[0])
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(10):
                infer(batch[0])
            torch.cuda.synchronize()
            seconds = (time.perf_counter() - start) / 10
            if profile:
                print_kernel_profile(f"{self.backend} inference", lambda: infer(batch[0]))
        self.model.train()
        return seconds


def step_gradients(model, backend, x, target):
    """Every parameter's gradient after one bf16-autocast step (backend None: float32 eager)."""
    model.zero_grad(set_to_none=True)
    run = model if backend is None else torch.compile(model, backend=backend)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=backend is not None):
        loss = nn.functional.cross_entropy(run(x), target)
    loss.backward()
    return {name: p.grad.detach().double().clone() for name, p in model.named_parameters()}


def grad_check(base, batch, backends):
    """Per parameter: ||g - g_ref|| / ||g_ref|| of each backend against float32 eager (TF32 off)."""
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    x, target = batch
    reference = step_gradients(copy.deepcopy(base), None, x, target)
    errors = {}
    for backend in backends:
        torch._dynamo.reset()
        grads = step_gradients(copy.deepcopy(base), backend, x, target)
        errors[backend] = {n: ((g - reference[n]).norm() / reference[n].norm().clamp_min(1e-30)).item()
                           for n, g in grads.items()}
    # Worst first by the largest error any backend has on the parameter.
    worst = sorted(errors[backends[0]], key=lambda n: -max(errors[b][n] for b in backends))
    print("parameter".ljust(40) + "".join(b.rjust(16) for b in backends))
    for name in worst[:12]:
        print(name.ljust(40) + "".join(f"{errors[b][name]:16.3e}" for b in backends))
    conv_weights = [n for n, g in reference.items() if g.dim() == 4]  # the parameters boo computes gradients of
    for b in backends:
        for label, names in (("all parameters", list(errors[b])), ("conv weights", conv_weights)):
            values = sorted(errors[b][n] for n in names)
            print(f"{b}, {label}: median relative gradient error {values[len(values) // 2]:.3e}, "
                  f"max {values[-1]:.3e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=20, help="steps of each backend per round")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of --steps steps, the backends in turns")
    ap.add_argument("--backends", default="inductor,boo_inductor,aot_eager")
    ap.add_argument("--grad-check", action="store_true")
    ap.add_argument("--profile", action="store_true", help="print each backend's GPU kernels, the largest first")
    ap.add_argument("--mode", default=None, help="torch.compile's mode, e.g. reduce-overhead (CUDA graphs)")
    args = ap.parse_args()
    torch.manual_seed(0)
    base = ResNet50().cuda().to(memory_format=torch.channels_last)
    batches = [(torch.randn(args.batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last),
                torch.randint(0, 1000, (args.batch,), device="cuda")) for _ in range(4)]
    if args.grad_check:
        grad_check(base, batches[0], args.backends.split(","))
        return
    # The backends train in turns, --rounds rounds of --steps steps each (the order reversed every other round),
    # so that each sees the GPU's clocks and temperature of the others; a step's time is its median over the
    # rounds (the first round's first 3 steps, which compile, left out).
    # (No dynamo reset between backends: it would drop the compiled graphs of those already trained, which
    # the next round runs again; each model's graphs are guarded on its own modules.)
    names = args.backends.split(",")
    trainers = {}
    torch._dynamo.reset()
    for backend in names:
        trainers[backend] = Trainer(copy.deepcopy(base), backend, args.mode)
        trainers[backend].train(batches, args.steps)
    for round_index in range(1, args.rounds):
        for backend in (names[::-1] if round_index % 2 else names):
            trainers[backend].train(batches, args.steps)
    results = {}
    for backend in names:
        t = trainers[backend]
        if args.profile:
            t.profile_step(batches[0])
        infer_s = t.inference(batches[0], args.profile)
        steady = sorted(t.times[3:])[len(t.times[3:]) // 2] if len(t.times) > 3 else t.times[-1]
        per_round = [sorted(t.times[i * args.steps + (3 if i == 0 else 0):(i + 1) * args.steps])
                     for i in range(args.rounds)]
        rounds = " ".join(f"{r[len(r) // 2] * 1e3:.1f}" for r in per_round if r)
        results[backend] = t.losses
        print(f"{backend}: first step {t.times[0]:.1f} s (compiles), median step {steady * 1e3:.1f} ms "
              f"(per round: {rounds}), inference {infer_s * 1e3:.1f} ms per batch of {args.batch}")
        print(f"  losses: {' '.join(f'{v:.4f}' for v in t.losses)}")
    # Every backend against the first: a third backend that rounds differently from inductor
    # (aot_eager) shows how far bf16 training drifts from rounding alone.
    for name in names[1:]:
        diff = max(abs(a - b) for a, b in zip(results[names[0]], results[name]))
        print(f"largest loss difference {name} vs {names[0]} over {len(results[name])} steps: {diff:.4f}")


if __name__ == "__main__":
    main()
