"""boo's ops in CUDA graphs: a small model (convs with bias and fused activations, batch and group norm,
a residual add) captured with torch.cuda.graph and compiled with torch.compile(mode="reduce-overhead"),
replayed on new inputs, against the same model run eagerly. Kernels are compiled by the warm-up before
the capture; a signature first met during a capture is an error that says so.

Run as: python3 tests/python/test_cuda_graphs.py cuda (GPU only: exit 77 without one). Runs on the
registration in use (C++ where built); BOO_TORCH_LIBRARY=0 runs it on the Python one.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch

    import boo
    from boo import ops
except ImportError as e:
    sys.exit(f"{e.name} is not installed for {sys.executable}: run scripts/test.sh (it installs PyTorch from "
             "requirements-dev.txt and boo with `pip install .`)")
from cuda_or_skip import cuda_or_skip

DEVICE = sys.argv.pop(1) if len(sys.argv) > 1 and sys.argv[1] in ("cpu", "cuda") else "cuda"
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False


class Block(torch.nn.Module):
    """relu(bn(conv(x)) + conv1x1(x)), then a group norm and a conv with a fused SiLU, in boo's ops."""

    def __init__(self, channels=16):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(channels, channels, 3, 3) * 0.1)
        self.w2 = torch.nn.Parameter(torch.randn(channels, channels, 1, 1) * 0.1)
        self.b2 = torch.nn.Parameter(torch.randn(channels) * 0.1)
        self.w3 = torch.nn.Parameter(torch.randn(channels, channels, 3, 3) * 0.1)
        self.bn_w = torch.nn.Parameter(torch.rand(channels) + 0.5)
        self.bn_b = torch.nn.Parameter(torch.randn(channels) * 0.1)
        self.register_buffer("running_mean", torch.zeros(channels))
        self.register_buffer("running_var", torch.ones(channels))
        self.gn_w = torch.nn.Parameter(torch.rand(channels) + 0.5)

    def forward(self, x):
        h = ops.batch_norm(ops.conv(x, self.w1, padding=1), self.bn_w, self.bn_b, self.running_mean,
                           self.running_var, training=False)
        h = torch.relu(h + ops.conv(x, self.w2, self.b2))
        h = ops.group_norm(h, 4, self.gn_w, None)
        return ops.conv(h, self.w3, padding=1, activation="silu")


def model_and_inputs(dtype, channels_last):
    torch.manual_seed(0)
    model = Block().to(DEVICE, dtype=torch.float32)
    model.running_mean.uniform_(-0.2, 0.2)
    model.running_var.uniform_(0.5, 1.5)
    inputs = [torch.randn(2, 16, 12, 12, device=DEVICE) for _ in range(3)]
    if dtype != torch.float32:
        for name, p in model.named_parameters():
            if name.startswith("w") or name.startswith("b2"):
                p.data = p.data.to(dtype)
        inputs = [x.to(dtype) for x in inputs]
    if channels_last:
        inputs = [x.to(memory_format=torch.channels_last) for x in inputs]
    return model, inputs


def tolerance(dtype):
    return {torch.float32: (1e-4, 1e-4), torch.bfloat16: (2e-2, 2e-2)}[dtype]


class CudaGraphTest(unittest.TestCase):
    def test_capture_and_replay(self):
        for dtype in (torch.float32, torch.bfloat16):
            for channels_last in (False, True):
                with self.subTest(dtype=dtype, channels_last=channels_last), torch.no_grad():
                    model, inputs = model_and_inputs(dtype, channels_last)
                    eager = [model(x).clone() for x in inputs]
                    static_x = inputs[0].clone()
                    # The warm-up compiles (or loads) every kernel, on a side stream as PyTorch advises.
                    side = torch.cuda.Stream()
                    side.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(side):
                        model(static_x)
                    torch.cuda.current_stream().wait_stream(side)
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        static_y = model(static_x)
                    for x, want in zip(inputs, eager):
                        static_x.copy_(x)
                        graph.replay()
                        rtol, atol = tolerance(dtype)
                        torch.testing.assert_close(static_y, want, rtol=rtol, atol=atol)

    def test_compile_reduce_overhead(self):
        with torch.no_grad():
            model, inputs = model_and_inputs(torch.float32, True)
            eager = [model(x).clone() for x in inputs]
            torch._dynamo.reset()
            compiled = torch.compile(model, backend="boo_inductor", mode="reduce-overhead")
            for _ in range(3):  # cudagraph trees record after warm-up runs
                for x, want in zip(inputs, eager):
                    torch.testing.assert_close(compiled(x.clone()).clone(), want, rtol=1e-4, atol=1e-4)

    def test_a_signature_first_met_during_a_capture_says_to_warm_up(self):
        x = torch.randn(1, 8, 11, 13, device=DEVICE)  # shapes no other test uses: not compiled yet
        w = torch.randn(8, 8, 3, 3, device=DEVICE)
        graph = torch.cuda.CUDAGraph()
        with self.assertRaises(Exception) as raised:
            with torch.no_grad(), torch.cuda.graph(graph):
                ops.conv(x, w, padding=1)
        messages = []
        e = raised.exception
        while e is not None:
            messages.append(str(e))
            e = e.__context__
        self.assertTrue(any("warm-up" in m for m in messages), messages)


if __name__ == "__main__":
    cuda_or_skip(DEVICE)
    print("registration:", ops.registration)
    unittest.main()
