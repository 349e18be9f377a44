"""iree-turbine BOO's Python names on boo: the iree_boo* torch.compile backends,
the keyword signature classes (ConvSignature, LayerNormSignature, ...) with
get(), get_sample_args() and get_nn_module(), enable_backward()/disable_backward(),
the cache API, replace_convs_with_boo's filters and unbatched conv input.

Run as: python3 tests/python/test_boo_names.py [cpu|cuda]
   or: BOO_TEST_DEVICE=cuda pytest tests/python/test_boo_names.py
(cpu: the float64 reference behind every op, label unit; cuda: boo's kernels, label gpu).
"""
import os
import sys
import tempfile
import unittest
import unittest.mock
from pathlib import Path

try:
    import torch
    import torch.nn.functional as F
    import torch.utils._python_dispatch

    import boo
    from boo import _C, ops
    from boo.turbine import ConvMode, LayerNormMode, RMSNormMode
except ImportError as e:
    sys.exit(f"{e.name} is not installed for {sys.executable}: run scripts/test.sh (it installs PyTorch from "
             "requirements-dev.txt and boo with `pip install .`)")

DEVICE = sys.argv.pop(1) if len(sys.argv) > 1 and sys.argv[1] in ("cpu", "cuda") else os.environ.get(
    "BOO_TEST_DEVICE", "cpu")
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
# Errors allowed between boo (the float64 reference on the CPU, kernels on the GPU) and PyTorch.
TOL = {torch.float32: dict(rtol=2e-5, atol=1e-4), torch.bfloat16: dict(rtol=1.6e-2, atol=5e-2)}


def boo_conv_func_name(input_shape, kernel_shape, dtype, mode, bias, stride, padding, dilation, groups,
                       input_layout, kernel_layout, output_layout):
    """iree-turbine's get_conv_func_name, written out from its documented format."""
    items = ["conv", f"{len(input_shape) - 2}d", str(dtype).removeprefix("torch."), mode.name.lower()]
    if bias and mode == ConvMode.FORWARD:
        items.append("b")
    x = lambda values: "x".join(str(v) for v in values)
    items += [x(input_shape), input_layout.lower(), x(kernel_shape), kernel_layout.lower().replace("n", "f"),
              output_layout.lower().replace("c", "f"), x(stride) + "s", x(padding) + "p", x(dilation) + "d",
              f"{groups}g"]
    return "_".join(items)


def assert_close(test, got, want, dtype, what):
    got = got if isinstance(got, (tuple, list)) else [got]
    want = want if isinstance(want, (tuple, list)) else [want]
    test.assertEqual(len(got), len(want), what)
    for g, w in zip(got, want):
        # Results in another dtype than the signature's (float32 statistics) get float32's bounds.
        torch.testing.assert_close(g.to(w.dtype), w, msg=what, **TOL[dtype if w.dtype == dtype else torch.float32])


class BackendNamesTest(unittest.TestCase):
    def test_iree_boo_backends_registered(self):
        backends = torch._dynamo.list_backends(exclude_tags=())
        for name in ("iree_boo", "iree_boo_inductor", "iree_boo_experimental"):
            self.assertIn(name, backends)

    def test_iree_boo_backends_compile(self):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU(),
                                    torch.nn.Conv2d(8, 8, 1)).to(DEVICE)
        x = torch.randn(2, 4, 10, 10, device=DEVICE)
        want = model(x)
        rewrite = boo.compile.rewrite
        for name in ("iree_boo", "iree_boo_inductor", "iree_boo_experimental"):
            with self.subTest(backend=name):
                torch._dynamo.reset()
                counts = []

                def recording_rewrite(gm, fusion_schema=None):
                    counts.append(rewrite(gm, fusion_schema))
                    return counts[-1]

                with unittest.mock.patch.object(boo.compile, "rewrite", recording_rewrite):
                    got = torch.compile(model, backend=name)(x)
                self.assertEqual(sum(c["conv"] for c in counts), 2, "the rewrite did not take both convs")
                assert_close(self, got, want, torch.float32, name)


class ConvSignatureTest(unittest.TestCase):
    def test_keywords_in_layout_order(self):
        sig = boo.ConvSignature(input_shape=[2, 12, 12, 16], kernel_shape=[32, 3, 3, 16], shared_layout="NHWC",
                                padding=1, stride=(1, 2), bias=True, dtype=torch.float32, mode="fwd")
        self.assertEqual(sig.signature, boo.Signature.from_command(
            "conv -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -p 1 -q 1 -v 2 -F 1 -b 1 --in_layout NHWC "
            "--fil_layout NHWC --out_layout NHWC"))
        self.assertEqual(sig.output_shape, [2, 12, 6, 32])
        self.assertEqual(sig.func_name, boo_conv_func_name([2, 12, 12, 16], [32, 3, 3, 16], torch.float32,
                                                           ConvMode.FORWARD, True, [1, 2], [1, 1], [1, 1], 1,
                                                           "NHWC", "NHWC", "NHWC"))

    def test_modes(self):
        common = dict(input_shape=[2, 8, 9, 9], kernel_shape=[8, 8, 3, 3], dtype=torch.bfloat16)
        for mode, forw in (("bwd", 2), ("WRW", 4), ("input-weight-backward", 6), (ConvMode.BIAS_BACKWARD, 7),
                           ("all_backward", 10)):
            with self.subTest(mode=mode):
                sig = boo.ConvSignature(mode=mode, **common)
                self.assertEqual(sig.signature, boo.Signature.from_command(
                    f"convbfp16 -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -F {forw}"))
                self.assertEqual(sig.func_name, boo_conv_func_name(
                    [2, 8, 9, 9], [8, 8, 3, 3], torch.bfloat16, ConvMode.parse(mode), False, [1, 1], [0, 0], [1, 1],
                    1, "NCHW", "NCHW", "NCHW"))
        masked = boo.ConvSignature(backward_mask=[True, True, False], **common)
        self.assertEqual(masked.mode, ConvMode.INPUT_WEIGHT_BACKWARD)
        self.assertEqual(masked.backward_mask, [True, True, False])
        self.assertFalse(masked.is_forward)
        with self.assertRaisesRegex(ValueError, "FORWARD"):
            boo.ConvSignature(mode="sideways", **common)

    def test_bad_keywords(self):
        with self.assertRaisesRegex(ValueError, "same rank"):
            boo.ConvSignature(input_shape=[2, 8, 9, 9], kernel_shape=[8, 8, 3])
        with self.assertRaisesRegex(ValueError, "input_layout='NHWX'"):
            boo.ConvSignature(input_shape=[2, 8, 9, 9], kernel_shape=[8, 8, 3, 3], input_layout="NHWX")
        with self.assertRaisesRegex(ValueError, "weight_shape"):
            boo.ConvSignature(input_shape=[2, 8, 9, 9], kernel_shape=[8, 4, 3, 3])

    def test_get_from_tensors(self):
        x, w, b = torch.zeros(2, 8, 9, 9), torch.zeros(4, 8, 3, 3), torch.zeros(4)
        sig = boo.ConvSignature.get(x, w, b, padding=1)
        self.assertEqual(sig.as_init_kwargs()["bias"], True)
        self.assertEqual(sig, boo.ConvSignature(input_shape=[2, 8, 9, 9], kernel_shape=[4, 8, 3, 3], bias=True,
                                                dtype=torch.float32, padding=[1, 1]))

    def test_sample_args(self):
        sig = boo.ConvSignature(input_shape=[2, 9, 9, 8], kernel_shape=[4, 3, 3, 8], shared_layout="NHWC", bias=True)
        splat = sig.get_sample_args(device=DEVICE, splat_value=1.5)
        self.assertEqual([list(t.shape) for t in splat], [[2, 8, 9, 9], [4, 8, 3, 3], [4]])
        self.assertTrue(all(bool((t == 1.5).all()) for t in splat))
        self.assertTrue(splat[0].is_contiguous(memory_format=torch.channels_last))
        seeded = sig.get_sample_args(device=DEVICE, seed=3)
        again = sig.signature.sample_args(device=DEVICE, seed=3)
        for a, b in zip(seeded, again):
            self.assertTrue(torch.equal(a, b))

    def test_nn_module_matches_boo(self):
        cases = [
            dict(input_shape=[2, 9, 9, 8], kernel_shape=[4, 3, 3, 8], shared_layout="NHWC", bias=True, padding=1,
                 dtype=torch.float32),
            dict(input_shape=[2, 8, 9, 9], kernel_shape=[8, 4, 3, 3], groups=2, stride=2, dtype=torch.float32,
                 mode="all_backward"),
            dict(input_shape=[2, 8, 9, 9], kernel_shape=[6, 8, 3, 3], dtype=torch.bfloat16, mode="bwd"),
            dict(input_shape=[2, 8, 9], kernel_shape=[6, 8, 3], dtype=torch.float32, dilation=2, mode="wrw"),
        ]
        for case in cases:
            with self.subTest(**{k: v for k, v in case.items() if k != "dtype"}):
                sig = boo.ConvSignature(**case)
                args = sig.get_sample_args(device=DEVICE, seed=10)
                want = sig.get_nn_module()(*args)
                got = boo.get_launchable(sig)(*args)
                assert_close(self, got, want, case["dtype"], sig.func_name)

    def test_transposed_nn_module_matches_torch(self):
        sig = boo.ConvSignature(input_shape=[2, 8, 5, 5], kernel_shape=[8, 3, 3, 3], transposed=True, stride=2,
                                output_padding=1, dtype=torch.float32)
        x, w = sig.get_sample_args(device=DEVICE)
        assert_close(self, sig.get_nn_module()(x, w), F.conv_transpose2d(x, w, stride=2, output_padding=1),
                     torch.float32, "transposed")
        self.assertEqual(list(sig.get_nn_module()(x, w).shape), sig.output_shape)


class NormSignatureTest(unittest.TestCase):
    def test_layer_norm_keywords(self):
        sig = boo.LayerNormSignature(input_shape=[4, 8, 16], normalized_shape=[8, 16], mode="full_backward")
        self.assertEqual(sig.signature, boo.Signature.from_command("layernormbfp16 -X 4x8x16 -o 1 -m 1 -F 14"))
        self.assertEqual(sig.mode, LayerNormMode.FULL_BACKWARD)
        no_aten = boo.LayerNormSignature(input_shape=[4, 8, 16], normalized_shape=[16], use_aten=False)
        self.assertEqual(no_aten.signature, boo.Signature.from_command("layernormbfp16 -X 4x8x16 -o 2 -m 1 "
                                                                       "--use-aten 0"))
        self.assertEqual(boo.LayerNormSignature(input_shape=[4, 8], normalized_shape=[8], elementwise_affine=False,
                                                dtype=torch.float32).signature,
                         boo.Signature.from_command("layernorm -X 4x8 -o 1 -m 0"))
        with self.assertRaisesRegex(ValueError, "bias needs a weight"):
            boo.LayerNormSignature(input_shape=[4, 8], normalized_shape=[8], elementwise_affine=False, bias=True)
        with self.assertRaisesRegex(NotImplementedError, "float32"):
            boo.LayerNormSignature(input_shape=[4, 8], normalized_shape=[8], forwarded_args_dtype=torch.bfloat16)
        with self.assertRaisesRegex(ValueError, "normalized_shape"):
            boo.LayerNormSignature(input_shape=[4, 8], normalized_shape=[4])
        x, w, b = torch.zeros(4, 8), torch.zeros(8), torch.zeros(8)
        self.assertEqual(boo.LayerNormSignature.get(x, 8, w, b).signature,
                         boo.Signature.from_command("layernorm -X 4x8 -o 1 -m 1"))

    def test_rms_norm_keywords(self):
        sig = boo.RMSNormSignature(input_shape=[4, 8, 16], normalized_shape=[16], elementwise_affine=False,
                                   mode=RMSNormMode.BACKWARD)
        self.assertEqual(sig.signature, boo.Signature.from_command("t5layernormbfp16 -X 4x8x16 -m 4 -F 2"))

    def test_nn_modules_match_boo(self):
        cases = [
            boo.LayerNormSignature(input_shape=[6, 4, 32], normalized_shape=[4, 32], dtype=torch.float32),
            boo.LayerNormSignature(input_shape=[6, 32], normalized_shape=[32], dtype=torch.float32,
                                   mode="full_backward"),
            boo.LayerNormSignature(input_shape=[6, 32], normalized_shape=[32], dtype=torch.bfloat16, bias=False,
                                   mode="input_backward"),
            boo.LayerNormSignature(input_shape=[6, 32], normalized_shape=[32], dtype=torch.float32,
                                   mode="weight_backward"),
            boo.LayerNormSignature(input_shape=[6, 32], normalized_shape=[32], dtype=torch.float32,
                                   mode="bias_backward"),
            boo.RMSNormSignature(input_shape=[6, 4, 32], normalized_shape=[32], dtype=torch.float32),
            boo.RMSNormSignature(input_shape=[6, 32], normalized_shape=[32], dtype=torch.float32, mode="backward"),
            boo.RMSNormSignature(input_shape=[6, 32], normalized_shape=[32], dtype=torch.bfloat16,
                                 elementwise_affine=False, mode="forward_backward"),
        ]
        for sig in cases:
            with self.subTest(sig=sig.func_name):
                args = sig.get_sample_args(device=DEVICE, seed=10)
                want = sig.get_nn_module()(*args)
                got = boo.get_launchable(sig)(*args)
                assert_close(self, got, want, sig.dtype, sig.func_name)


class OpCounter(torch.utils._python_dispatch.TorchDispatchMode):
    """The ops run while it is on, by name (e.g. "boo.conv_backward.default")."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))

    def count(self, name):
        return self.names.count(name)


class BackwardToggleTest(unittest.TestCase):
    def tearDown(self):
        ops._set_backward_kernels(None)  # back to BOO_USE_BACKWARD_KERNELS

    def grads(self):
        """The gradients of a conv, and how many boo::conv_backward calls they took (seen by a dispatch
        mode: the autograd may be the C++ registration's or Python's)."""
        torch.manual_seed(0)
        x = torch.randn(2, 4, 6, 6, device=DEVICE, requires_grad=True)
        w = torch.randn(8, 4, 3, 3, device=DEVICE, requires_grad=True)
        with OpCounter() as ops_run:
            ops.conv(x, w, padding=1).square().sum().backward()
        return (x.grad, w.grad), ops_run.count("boo.conv_backward.default")

    def test_toggle(self):
        boo.disable_backward()
        self.assertFalse(boo.is_boo_backward_enabled())
        aten_grads, backward_calls = self.grads()
        self.assertEqual(backward_calls, 0, "boo's backward ran")
        boo.enable_backward()
        self.assertTrue(boo.is_boo_backward_enabled())
        boo_grads, backward_calls = self.grads()
        self.assertEqual(backward_calls, 1)
        for a, b in zip(aten_grads, boo_grads):
            assert_close(self, b, a, torch.float32, "gradients")

    def test_toggle_wins_over_the_environment(self):
        with unittest.mock.patch.dict(os.environ, {"BOO_USE_BACKWARD_KERNELS": "0"}):
            self.assertFalse(boo.is_boo_backward_enabled())
            boo.enable_backward()
            self.assertTrue(boo.is_boo_backward_enabled())


class CacheApiTest(unittest.TestCase):
    def setUp(self):
        self.saved = _C.cache_settings()

    def tearDown(self):
        _C.set_cache_settings(*self.saved)

    def test_settings(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(boo.set_cache_dir(tmp), Path(tmp))
            self.assertEqual(boo.set_cache_dir(), Path(tmp))
            boo.toggle_cache_on(0)
            self.assertFalse(boo.is_cache_enabled())
            inner = Path(tmp) / "inner"
            with boo.use_cache_dir(inner) as used:
                self.assertEqual(used, inner)
                self.assertTrue(boo.is_cache_enabled())
                self.assertEqual(boo.set_cache_dir(), inner)
            self.assertFalse(boo.is_cache_enabled())
            self.assertEqual(boo.set_cache_dir(), Path(tmp))
            with self.assertRaisesRegex(ValueError, "0 or 1"):
                boo.toggle_cache_on(2)

    def test_clear_cache(self):
        with tempfile.TemporaryDirectory() as tmp:
            entry = Path(tmp) / "v1" / "sm_90a" / "ab" / "abcd.cubin"
            entry.parent.mkdir(parents=True)
            entry.write_bytes(b"cubin")
            boo.set_cache_dir(tmp)
            boo.clear_cache()
            self.assertFalse(entry.exists())
            self.assertTrue(Path(tmp).is_dir())

    def test_kernels_compile_into_the_chosen_folder(self):
        if DEVICE != "cuda":
            self.skipTest("compiling kernels needs a GPU")
        with tempfile.TemporaryDirectory() as tmp, boo.use_cache_dir(tmp):
            sig = boo.Signature.conv([1, 8, 7, 7], [8, 8, 1, 1], "float32", padding=0, stride=1,
                                     activation=boo.Activation(boo.ActivationKind.CLAMP, lo=-0.125, hi=0.375))
            boo.get_launchable(sig)(*sig.sample_args(device="cuda"))
            self.assertTrue(list(Path(tmp).rglob("*.cubin")), "no kernel was stored in the cache folder")


class ModuleReplacementTest(unittest.TestCase):
    def model(self):
        return torch.nn.Sequential(torch.nn.Conv1d(2, 2, 3), torch.nn.Conv2d(2, 2, 3),
                                   torch.nn.Conv2d(2, 2, 3, stride=2), torch.nn.Conv3d(2, 2, 1),
                                   torch.nn.LayerNorm(4))

    def test_replace_convs_with_boo_filters(self):
        model = boo.replace_convs_with_boo(self.model(), allowed_spatial_dims=(2,),
                                           kwarg_mapping={2: {"stride": (1, 1)}})
        self.assertEqual([type(m) for m in model],
                         [torch.nn.Conv1d, boo.nn.Conv2d, torch.nn.Conv2d, torch.nn.Conv3d, torch.nn.LayerNorm])
        model = boo.nn.replace_conv2d_with_boo_conv(self.model(), stride=(2, 2))
        self.assertEqual([type(m) for m in model],
                         [torch.nn.Conv1d, torch.nn.Conv2d, boo.nn.Conv2d, torch.nn.Conv3d, torch.nn.LayerNorm])
        model = boo.replace_modules(self.model(), allowed_spatial_dims=(1, 3))
        self.assertEqual([type(m) for m in model],
                         [boo.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv2d, boo.nn.Conv3d, boo.nn.LayerNorm])
        with self.assertRaisesRegex(ValueError, "allowed_spatial_dims"):
            boo.replace_convs_with_boo(self.model(), allowed_spatial_dims=(4,))
        model = self.model()
        with self.assertRaisesRegex(ValueError, "no attribute 'strides'"):
            boo.replace_convs_with_boo(model, kwarg_mapping={2: {"strides": (1, 1)}})
        self.assertFalse(any(type(m).__module__.startswith("boo") for m in model), "replaced before the error")

    def test_unbatched_conv_input(self):
        torch.manual_seed(0)
        for conv, shape in ((torch.nn.Conv1d(3, 4, 3, padding=1), (3, 10)),
                            (torch.nn.Conv2d(3, 4, 3, padding=1, bias=False), (3, 7, 9)),
                            (torch.nn.Conv2d(3, 4, 2, padding="same", padding_mode="reflect"), (3, 7, 9)),
                            (torch.nn.Conv3d(3, 4, 2, stride=2), (3, 4, 6, 6))):
            with self.subTest(conv=str(conv)):
                conv = conv.to(DEVICE)
                x = torch.randn(*shape, device=DEVICE)
                want = conv(x)
                got = boo.replace_modules(conv)(x)
                self.assertEqual(got.shape, want.shape)
                assert_close(self, got, want, torch.float32, str(conv))


if __name__ == "__main__":
    from cuda_or_skip import cuda_or_skip
    cuda_or_skip(DEVICE)
    unittest.main()
