"""boo's ops registered in C++ (boo/_torch_ops.so, python/src/torch_ops.cpp) against the Python
registration they replace: which one is in use, their schemas, opcheck, conv's C++ autograd, and on a
GPU the C++ CUDA kernels' fallback to PyTorch.

Run as: python3 tests/python/test_torch_library.py [cpu|cuda]
(cpu: the ops' CPU kernels are the float64 reference, label unit; cuda: boo's kernels through the C++
CUDA kernels, label gpu; exit 77 without a GPU).
"""
import importlib.util
import json
import os
import subprocess
import sys
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
    import torch.nn.functional as F

    import boo
    from boo import ops
except ImportError as e:
    sys.exit(f"{e.name} is not installed for {sys.executable}: run scripts/test.sh (it installs PyTorch from "
             "requirements-dev.txt and boo with `pip install .`)")
from cuda_or_skip import cuda_or_skip

DEVICE = sys.argv.pop(1) if len(sys.argv) > 1 and sys.argv[1] in ("cpu", "cuda") else "cpu"
torch.backends.cudnn.allow_tf32 = False
# Whether this boo was built with the C++ registration (python/CMakeLists.txt writes boo/_torch_build.py).
BUILT = importlib.util.find_spec("boo._torch_build") is not None
OPS = ("conv", "conv_residual", "conv_backward", "layer_norm", "layer_norm_backward", "rms_norm", "rms_norm_backward", "batch_norm",
       "batch_norm_backward", "group_norm", "group_norm_backward", "matmul")

# What a process with boo's ops registered prints about them: the registration, each schema, which
# source registered conv's CUDA kernel, and conv's whole dispatcher entry.
REPORT = """
import json, torch
from boo import ops
dump = torch._C._dispatch_dump("boo::conv")
cuda = [line for line in dump.splitlines() if line.startswith("CUDA:")]
print(json.dumps({"registration": ops.registration, "cuda": cuda[0] if cuda else "", "dump": dump,
                  "schemas": {n: str(getattr(torch.ops.boo, n).default._schema) for n in %r}}))
""" % (OPS,)


def report(torch_library):
    """REPORT of a new process with BOO_TORCH_LIBRARY=`torch_library`."""
    env = dict(os.environ, BOO_TORCH_LIBRARY=torch_library)
    out = subprocess.run([sys.executable, "-c", REPORT], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


class RegistrationTest(unittest.TestCase):
    def test_the_cpp_registration_is_in_use_where_it_was_built(self):
        here = report("1")
        if not BUILT:
            self.assertTrue(here["registration"].startswith("Python ("), here["registration"])
            self.skipTest("boo was built without PyTorch's C++ headers: " + here["registration"])
        self.assertEqual(here["registration"], "C++")
        self.assertIn("torch_ops.cpp", here["cuda"], "conv's CUDA kernel is not the C++ one")

    def test_the_python_registration_when_forced_off(self):
        off = report("0")
        self.assertEqual(off["registration"], "Python (BOO_TORCH_LIBRARY=0)")
        # torch.library.custom_op's registration: its schema and kernels, nothing of torch_ops.cpp.
        self.assertIn("custom_ops.py", off["dump"].splitlines()[2], off["dump"])
        self.assertNotIn("torch_ops.cpp", off["dump"])

    def test_both_registrations_declare_the_same_schemas(self):
        if not BUILT:
            self.skipTest("boo was built without PyTorch's C++ headers")
        self.assertEqual(report("1")["schemas"], report("0")["schemas"])


class ConvTest(unittest.TestCase):
    """torch.ops.boo.conv and conv_backward on whichever registration this process has (C++ where built)."""

    def args(self, bias=True, channels_last=False, dtype=torch.float32):
        torch.manual_seed(0)
        x = torch.randn(2, 4, 7, 7, device=DEVICE, dtype=dtype)
        w = torch.randn(6, 4, 3, 3, device=DEVICE, dtype=dtype)
        if channels_last:
            x, w = x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last)
        b = torch.randn(6, device=DEVICE, dtype=dtype) if bias else None
        return x, w, b

    def test_opcheck(self):
        for bias, channels_last, activation in ((True, False, "relu"), (False, True, "none"),
                                                (True, True, "leaky_relu:0.2")):
            with self.subTest(bias=bias, channels_last=channels_last, activation=activation):
                x, w, b = self.args(bias, channels_last)
                layouts = "NHWC,NHWC,NHWC" if channels_last else "NCHW,NCHW,NCHW"
                x.requires_grad_(), w.requires_grad_()
                if b is not None:
                    b.requires_grad_()
                torch.library.opcheck(torch.ops.boo.conv.default,
                                      (x, w, b, [1, 1], [1, 1], [1, 1], 1, activation, layouts))
                dy = torch.randn(2, 6, 7, 7, device=DEVICE)
                torch.library.opcheck(torch.ops.boo.conv_backward.default,
                                      (dy, x.detach(), w.detach(), bias, [1, 1], [1, 1], [1, 1], 1, layouts,
                                       [True, True, bias]))

    def test_gradients_through_each_activation_match_pytorch(self):
        """conv's autograd (C++ where built): the activation's gradient at the recomputed pre-activation,
        then boo's backward kernels, or ATen's with them off."""
        for activation in ("relu", "sigmoid", "tanh", "silu", "gelu", "gelu_tanh", "leaky_relu:0.1", "clamp:-0.5:0.5"):
            for boo_backward in (True, False):
                with self.subTest(activation=activation, boo_backward=boo_backward):
                    ops._set_backward_kernels(boo_backward)
                    try:
                        x, w, b = (t.requires_grad_() for t in self.args())
                        y = ops.conv(x, w, b, padding=1, activation=activation)
                        dy = torch.randn_like(y)
                        got = torch.autograd.grad(y, [x, w, b], dy)
                        want_y = ops._activation_fn(activation)(F.conv2d(x, w, b, padding=1))
                        want = torch.autograd.grad(want_y, [x, w, b], dy)
                    finally:
                        ops._set_backward_kernels(None)
                    torch.testing.assert_close(y, want_y, rtol=1e-4, atol=1e-4)
                    for name, a, e in zip(("dx", "dw", "db"), got, want):
                        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4, msg=name)

    def test_only_the_gradients_asked_for(self):
        """The bias is no input edge when absent; inputs that need no gradient get none."""
        x, w, _ = self.args(bias=False)
        w.requires_grad_()
        (dw,) = torch.autograd.grad(ops.conv(x, w, padding=1).sum(), [w])
        torch.testing.assert_close(dw, torch.autograd.grad(F.conv2d(x, w, padding=1).sum(), [w])[0],
                                   rtol=1e-4, atol=1e-4)

    def test_conv_residual_opcheck_and_gradients(self):
        """boo::conv_residual: act(conv(x, w) + b + z), z of the output's shape in its own strides; its
        autograd gives dz = the gradient at the sum (after the activation's), dx, dw, db from the same."""
        for bias, channels_last, activation in ((True, False, "relu"), (False, True, "none"),
                                                (True, True, "silu")):
            with self.subTest(bias=bias, channels_last=channels_last, activation=activation):
                x, w, b = self.args(bias, channels_last)
                z = torch.randn(2, 6, 7, 7, device=DEVICE)
                if channels_last:
                    z = z.to(memory_format=torch.channels_last)
                layouts = "NHWC,NHWC,NHWC" if channels_last else "NCHW,NCHW,NCHW"
                leaves = [t.requires_grad_() for t in (x, w, b, z) if t is not None]
                torch.library.opcheck(torch.ops.boo.conv_residual.default,
                                      (x, w, b, z, [1, 1], [1, 1], [1, 1], 1, activation, layouts))
                y = ops.conv(x, w, b, padding=1, activation=activation, residual=z)
                want_y = ops._activation_fn(activation)(F.conv2d(x, w, b, padding=1) + z)
                torch.testing.assert_close(y, want_y, rtol=1e-4, atol=1e-4)
                dy = torch.randn_like(y)
                for got, want in zip(torch.autograd.grad(y, leaves, dy), torch.autograd.grad(want_y, leaves, dy)):
                    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)

    def test_a_call_boo_declines_runs_on_pytorch_with_a_warning(self):
        """An empty batch is no boo signature: the C++ CUDA kernel passes the call to boo.ops' kernel,
        which warns and runs PyTorch (BOO_STRICT=1 raises)."""
        x = torch.randn(0, 4, 7, 7, device=DEVICE)
        w = torch.randn(6, 4, 3, 3, device=DEVICE)
        ops._warn_fallback.cache_clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = torch.ops.boo.conv.default(x, w, None, [1, 1], [1, 1], [1, 1], 1, "none", "NCHW,NCHW,NCHW")
        self.assertTrue(any("runs on PyTorch" in str(c.message) for c in caught), [str(c.message) for c in caught])
        self.assertEqual(list(y.shape), [0, 6, 7, 7])
        os.environ["BOO_STRICT"] = "1"
        try:
            with self.assertRaisesRegex(ValueError, "every size must be positive"):
                torch.ops.boo.conv.default(x, w, None, [1, 1], [1, 1], [1, 1], 1, "none", "NCHW,NCHW,NCHW")
        finally:
            del os.environ["BOO_STRICT"]


class BatchNormTest(unittest.TestCase):
    """torch.ops.boo.batch_norm on whichever registration this process has: C++ where built, its CUDA kernel
    (boo's kernel through the launch cache, else boo.ops' Python kernel) and its autograd."""

    # Every combination of the optional tensors: (weight, bias) present, and the running statistics
    # (inference needs them).
    AFFINE = ((True, True), (False, True), (True, False), (False, False))

    def args(self, shape=(3, 4, 5, 6), channels_last=False, affine=(True, True), running=True, dtype=torch.float32):
        torch.manual_seed(1)
        x = torch.randn(*shape, device=DEVICE, dtype=dtype)
        if channels_last:
            x = x.to(memory_format=torch.channels_last)
        c = shape[1]
        w = torch.rand(c, device=DEVICE) + 0.5 if affine[0] else None
        b = torch.randn(c, device=DEVICE) if affine[1] else None
        if not running:
            return x, w, b, None, None
        return x, w, b, torch.randn(c, device=DEVICE), torch.rand(c, device=DEVICE) + 0.5

    @staticmethod
    def reference(x, w, b, rm, rv, training, momentum, eps):
        """F.batch_norm with a weight of ones where there is none (the same function). PyTorch's CUDA batch
        norm has no bias gradient without a weight (2.11: an empty one from its channels-last training
        backward, 'tensor does not have a device' from its inference backward)."""
        if w is None:
            w = torch.ones(x.shape[1], device=x.device)
        return F.batch_norm(x, rm, rv, w, b, training, momentum, eps)

    def test_the_cpp_kernel_and_autograd_where_built(self):
        if ops.registration != "C++":  # RegistrationTest checks that it is wherever it was built
            self.skipTest("this process has the Python registration: " + ops.registration)
        dump = torch._C._dispatch_dump("boo::batch_norm")
        for key in ("CUDA", "Autograd"):
            lines = [line for line in dump.splitlines() if line.startswith(key + ":") or
                     line.startswith(key + "[alias]")]
            self.assertTrue(lines and "torch_ops.cpp" in lines[0], f"{key}: {lines}")

    def test_opcheck(self):
        """The kernels (C++ on CUDA where built), the fake implementation and the autograd against each other,
        each optional tensor absent in turn."""
        for training, channels_last, affine, running in ((True, False, (True, True), True),
                                                         (False, True, (True, True), True),
                                                         (True, False, (False, True), False),
                                                         (True, True, (True, False), True),
                                                         (True, False, (False, False), False),
                                                         (False, False, (False, True), True),
                                                         (False, True, (False, False), True)):
            with self.subTest(training=training, channels_last=channels_last, affine=affine, running=running):
                x, w, b, rm, rv = self.args(channels_last=channels_last, affine=affine, running=running)
                for t in (x, w, b):
                    if t is not None:
                        t.requires_grad_()
                torch.library.opcheck(torch.ops.boo.batch_norm.default, (x, w, b, rm, rv, training, 0.1, 1e-5))

    def test_backward_opcheck_without_a_weight(self):
        """batch_norm_backward's kernel and fake implementation with no weight (a scale of ones) and each
        gradient left out in turn: those left out are empty."""
        x, _, _, _, _ = self.args(channels_last=True)
        _, mean, invstd, _, _ = torch.ops.boo.batch_norm.default(x, None, None, None, None, True, 0.1, 1e-5)
        dy = torch.randn_like(x)
        for mask in ([True, False, True], [False, False, True], [True, False, False]):
            with self.subTest(mask=mask):
                torch.library.opcheck(torch.ops.boo.batch_norm_backward.default,
                                      (dy, x, None, mean, invstd, 1e-5, mask))
                got = torch.ops.boo.batch_norm_backward.default(dy, x, None, mean, invstd, 1e-5, mask)
                self.assertEqual([list(t.shape) for t in got],
                                 [list(x.shape) if mask[0] else [0], [0], [4] if mask[2] else [0]])

    def test_outputs_and_gradients_match_pytorch(self):
        """Training (with and without running statistics) and inference, with and without the weight or bias
        (the autograd node's edges are the tensors given), boo's backward kernels on and off; the running
        statistics as PyTorch updates them."""
        for training, running in ((True, True), (True, False), (False, True)):
            for affine in self.AFFINE:
                for boo_backward in (True, False):
                    with self.subTest(training=training, running=running, affine=affine, boo_backward=boo_backward):
                        x, w, b, rm, rv = self.args(channels_last=training, affine=affine, running=running)
                        rm2, rv2 = (rm.clone(), rv.clone()) if running else (None, None)
                        leaves = [t.requires_grad_() for t in (x, w, b) if t is not None]
                        ops._set_backward_kernels(boo_backward)
                        try:
                            y = ops.batch_norm(x, w, b, rm, rv, training, 0.1, 1e-3)
                            dy = torch.randn_like(y)
                            got = torch.autograd.grad(y, leaves, dy)
                        finally:
                            ops._set_backward_kernels(None)
                        want_y = self.reference(x, w, b, rm2, rv2, training, 0.1, 1e-3)
                        want = torch.autograd.grad(want_y, leaves, dy)
                        torch.testing.assert_close(y, want_y, rtol=1e-4, atol=1e-4)
                        if running:
                            torch.testing.assert_close(rm, rm2, rtol=1e-5, atol=1e-6)
                            torch.testing.assert_close(rv, rv2, rtol=1e-5, atol=1e-6)
                        for i, (a, e) in enumerate(zip(got, want)):
                            torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4, msg=f"gradient {i}")

    def test_only_the_gradients_asked_for(self):
        """Each subset of the tensors given asks for gradients (the others are inputs that need none): the
        autograd node maps its edges to x, weight and bias by which are present."""
        for training in (True, False):
            for affine in self.AFFINE:
                x, w, b, rm, rv = self.args(affine=affine)
                given = [t for t in (x, w, b) if t is not None]
                for wanted in range(1, 1 << len(given)):
                    leaves = [t for i, t in enumerate(given) if wanted >> i & 1]
                    with self.subTest(training=training, affine=affine, wanted=wanted):
                        for i, t in enumerate(given):
                            t.requires_grad_(bool(wanted >> i & 1))
                        y = ops.batch_norm(x, w, b, rm.clone(), rv.clone(), training, 0.1, 1e-3)
                        dy = torch.randn_like(y)
                        want_y = self.reference(x, w, b, rm.clone(), rv.clone(), training, 0.1, 1e-3)
                        for i, (a, e) in enumerate(zip(torch.autograd.grad(y, leaves, dy),
                                                       torch.autograd.grad(want_y, leaves, dy))):
                            torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4, msg=f"gradient {i}")

    def test_running_statistics_both_or_neither_and_both_in_inference(self):
        """Called as torch.ops.boo.batch_norm (past boo.ops.batch_norm's checks): the kernel (C++ on CUDA where
        built), under autograd or not, and the fake implementation raise the same error."""
        from torch._subclasses.fake_tensor import FakeTensorMode
        x, w, b, rm, rv = self.args()
        for training, stats, error in ((False, (None, None), "inference .* normalizes by running_mean"),
                                       (True, (rm, None), "together"), (False, (None, rv), "together")):
            for grad in (False, True):
                with self.subTest(training=training, stats=[s is not None for s in stats], grad=grad):
                    with self.assertRaisesRegex(ValueError, error):
                        torch.ops.boo.batch_norm.default(x.detach().requires_grad_(grad), w, b, *stats, training,
                                                         0.1, 1e-5)
            with self.subTest(training=training, stats=[s is not None for s in stats], fake=True):
                with FakeTensorMode() as mode, self.assertRaisesRegex(ValueError, error):
                    fake = [None if t is None else mode.from_tensor(t) for t in (x, w, b, *stats)]
                    torch.ops.boo.batch_norm.default(*fake, training, 0.1, 1e-5)

    def test_inference_without_a_gradient_launches_boo_directly(self):
        """No gradient to record: the C++ autograd kernel passes the call below itself to the CUDA kernel,
        which launches boo's kernel (counted by the C++ registration) with no copy of the [C] parameters."""
        if DEVICE != "cuda" or ops.registration != "C++":
            self.skipTest("the C++ CUDA kernel's launches: on a GPU, with the C++ registration")
        x, w, b, rm, rv = self.args(channels_last=True, dtype=torch.bfloat16)
        ops.batch_norm(x, w, b, rm, rv)  # compiles or loads the kernel
        launches, copies = ops._cpp_counters()
        with torch.no_grad():
            y = ops.batch_norm(x, w, b, rm, rv)
        self.assertEqual(ops._cpp_counters(), (launches + 1, copies))
        torch.testing.assert_close(y, F.batch_norm(x, rm, rv, w, b), rtol=1.6e-2, atol=5e-2)


if __name__ == "__main__":
    cuda_or_skip(DEVICE)
    unittest.main()
