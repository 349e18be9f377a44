#!/usr/bin/env python3
"""The torch.compile rewrite compiles its candidates' kernels ahead, in parallel, on the fake CUDA driver (no
GPU): run with BOO_CUDA_DRIVER_DIR pointing at tests/fake_cuda's library (ctest python.compile_warmup_fake
does). The graph is a Dynamo-like FX graph whose example values are fake CUDA tensors (FakeTensorMode needs
no GPU), so the rewrite takes its GPU path: NVRTC compiles every kernel for the fake H100 (sm_90a) and the
fake driver "loads" them.

Checked: one _C.prepare call with every signature the rewrite checks, and the backward's recomputed conv,
on BOO_COMPILE_JOBS threads; after it no check compiles or loads anything (each finds its launchable made);
the kernels are in the disk cache, or, with BOO_CACHE_ON=0, in the process and not on disk; a signature
that fails in the warm-up is returned and the others are made; the rewritten graph is the one the rewrite
makes without the warm-up (BOO_COMPILE_JOBS=1, which makes no _C.prepare call); a bad BOO_COMPILE_JOBS is
a ValueError naming it; a graph without CUDA tensors warms nothing.
"""
import os
import pathlib
import sys
import tempfile
import unittest
import unittest.mock
import warnings

import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode

import boo
import boo.compile as boo_compile
from boo import _C, ops


def block(x, w1, g, b, rm, rv, w2):
    """A training conv -> batch norm -> relu, then a conv with a fused SiLU (whose backward recomputes
    the conv without it)."""
    y = F.relu(F.batch_norm(F.conv2d(x, w1, None, 1, 1), rm, rv, g, b, True, 0.1, 1e-5))
    return F.silu(F.conv2d(y, w2))


class ExampleValues(torch.fx.Interpreter):
    """Runs a graph and keeps each node's result as its example value (Dynamo's meta["example_value"]), with
    autograd on: the rewrite reads from them which candidates need a gradient."""

    def run_node(self, node):
        node.meta["example_value"] = super().run_node(node)
        return node.meta["example_value"]


def with_example_values(gm, make_inputs):
    """`gm` run on the fake tensors `make_inputs()` makes (FakeTensorMode: CUDA tensors without a GPU)."""
    with FakeTensorMode():
        ExampleValues(gm).run(*make_inputs())
    return gm


SHAPES = {"x": (4, 16, 8, 8), "w1": (16, 16, 3, 3), "g": (16,), "b": (16,), "rm": (16,), "rv": (16,),
          "w2": (32, 16, 1, 1)}


def graph_module(device="cuda"):
    """`block` traced, each node's example value (Dynamo's meta["example_value"]) a fake tensor on `device`:
    bfloat16 NCHW activations and weights and float32 batch norm parameters, all but the running statistics
    needing gradients."""
    def make_inputs():
        inputs = []
        for name, shape in SHAPES.items():
            dtype = torch.bfloat16 if len(shape) == 4 else torch.float32
            inputs.append(torch.ones(shape, device=device, dtype=dtype).requires_grad_(name not in ("rm", "rv")))
        return inputs

    return with_example_values(torch.fx.symbolic_trace(block), make_inputs)


def signatures():
    """The signatures of `block`'s boo ops in a training graph, as the rewrite builds them: each conv's
    forward and its data and weight gradients, the batch norm's training and backward passes, and the
    second conv's forward without its activation (the gradient's recompute)."""
    layouts = ("NCHW", "NCHW", "NCHW")
    conv1 = ((4, 16, 8, 8), (16, 16, 3, 3), torch.bfloat16, (1, 1), (1, 1), (1, 1), 1, False)
    conv2 = ((4, 16, 8, 8), (32, 16, 1, 1), torch.bfloat16, (1, 1), (0, 0), (1, 1), 1, False)
    wanted = frozenset(("input", "weight", "bias"))
    return ([ops.conv_signature(*conv1, "none", layouts, "forward")]
            + ops.conv_backward_signatures(*conv1, layouts, wanted)
            + [ops.conv_signature(*conv2, "silu", layouts, "forward")]
            + ops.conv_backward_signatures(*conv2, layouts, wanted)
            + [ops.batch_norm_signature((4, 16, 8, 8), torch.bfloat16, "NCHW", "training", True, 1e-5, 0.1),
               ops.batch_norm_signature((4, 16, 8, 8), torch.bfloat16, "NCHW", "backward", False, 1e-5),
               ops.conv_signature(*conv2, "none", layouts, "forward")])


def loaded():
    """Modules GPU 0's runtime has compiled or read from the disk cache so far."""
    stats = _C.runtime_stats(0)
    return stats["compiled"] + stats["disk_hits"]


def made(sig):
    """Whether GPU 0's runtime has made `sig`'s launchable: asking for it again compiles and loads nothing."""
    before = loaded()
    assert _C.prepare([sig], 0, 1) == []
    return loaded() == before


def cache_files(folder):
    return sorted(p for p in pathlib.Path(folder).rglob("*") if p.is_file() and p.suffix != ".sqlite")


class Spy:
    """Records _C.prepare's calls and the modules each _C.implementation call (the rewrite's check) loaded."""
    PREPARE, IMPLEMENTATION = _C.prepare, _C.implementation

    def __init__(self):
        self.prepared, self.check_loads = [], []

    def prepare(self, sigs, device, threads):
        self.prepared.append((list(sigs), device, threads))
        return Spy.PREPARE(sigs, device, threads)

    def implementation(self, sig, device):
        before = loaded()
        name = Spy.IMPLEMENTATION(sig, device)
        self.check_loads.append(loaded() - before)
        return name

    def rewrite(self, gm):
        with unittest.mock.patch.object(boo_compile._C, "prepare", self.prepare), \
                unittest.mock.patch.object(boo_compile._C, "implementation", self.implementation):
            return boo_compile.rewrite(gm)


class CompileWarmUp(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        previous = _C.cache_settings()
        self.addCleanup(lambda: _C.set_cache_settings(*previous))
        # A new cache setting starts a new runtime: nothing made, its counters at zero.
        _C.set_cache_settings(os.path.join(self.tmp.name, "cache"), True)
        patcher = unittest.mock.patch.dict(os.environ, {"BOO_COMPILE_JOBS": "2"})
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_rewrite_compiles_every_kernel_ahead_in_one_parallel_call(self):
        spy = Spy()
        counts = spy.rewrite(graph_module())
        self.assertEqual(counts, {"conv": 2, "layer_norm": 0, "rms_norm": 0, "batch_norm": 1, "group_norm": 0, "matmul": 0})
        self.assertEqual(len(spy.prepared), 1, spy.prepared)
        sigs, device, threads = spy.prepared[0]
        self.assertEqual((device, threads), (0, 2))
        self.assertEqual(set(sigs), set(signatures()))
        self.assertEqual(len(sigs), len(signatures()), "each signature once")
        # Every check found its kernels made: no check compiled or loaded a module.
        self.assertEqual(len(spy.check_loads), len(signatures()) - 1, "the recompute is warmed, not checked")
        self.assertEqual(spy.check_loads, [0] * len(spy.check_loads))
        self.assertTrue(all(made(sig) for sig in signatures()))
        stats = _C.runtime_stats(0)
        self.assertGreater(stats["compiled"], 0, stats)
        self.assertEqual(stats["disk_hits"], 0, stats)
        self.assertGreaterEqual(len(cache_files(os.path.join(self.tmp.name, "cache"))), stats["compiled"])

        # A second process (here: a new runtime on the same folder) loads them from the disk cache.
        _C.set_cache_settings(os.path.join(self.tmp.name, "cache"), True)
        spy = Spy()
        spy.rewrite(graph_module())
        stats = _C.runtime_stats(0)
        self.assertEqual(stats["compiled"], 0, stats)
        self.assertGreater(stats["disk_hits"], 0, stats)
        self.assertEqual(spy.check_loads, [0] * len(spy.check_loads))

    def test_cache_off_compiles_into_the_process(self):
        folder = os.path.join(self.tmp.name, "off")
        _C.set_cache_settings(folder, False)
        spy = Spy()
        spy.rewrite(graph_module())
        self.assertEqual(len(spy.prepared), 1)
        self.assertEqual(spy.check_loads, [0] * len(spy.check_loads))
        self.assertTrue(all(made(sig) for sig in signatures()))
        self.assertGreater(_C.runtime_stats(0)["compiled"], 0)
        self.assertEqual(cache_files(folder), [], "BOO_CACHE_ON=0 wrote the disk cache")

    def test_without_warm_up_the_checks_compile_and_the_graph_is_the_same(self):
        warmed = graph_module()
        Spy().rewrite(warmed)
        _C.set_cache_settings(os.path.join(self.tmp.name, "serial"), True)
        with unittest.mock.patch.dict(os.environ, {"BOO_COMPILE_JOBS": "1"}):
            spy = Spy()
            serial = graph_module()
            spy.rewrite(serial)
        self.assertEqual(spy.prepared, [])
        self.assertGreater(sum(spy.check_loads), 0, "the checks compiled nothing without the warm-up")
        self.assertEqual(warmed.code, serial.code)
        # The backward's recompute of the fused conv is no check's: left to its first use, as before.
        self.assertFalse(made(signatures()[-1]))

    def test_a_failing_signature_is_returned_and_the_others_are_made(self):
        # float64 has no GPU kernels: every tier declines it (UNIMPLEMENTED).
        bad = boo.Signature.from_command('aten::bmm "[[2, 3, 4], [2, 4, 5]]" "[\'double\', \'double\']" '
                                         '"[[12, 4, 1], [20, 5, 1]]" "[\'\', \'\']"')
        good = signatures()[:2]
        failures = _C.prepare([good[0], bad, good[1]], 0, 2)
        self.assertEqual(len(failures), 1, failures)
        self.assertEqual(failures[0][0], bad.command)
        self.assertIn("UNIMPLEMENTED", failures[0][1])
        self.assertTrue(made(good[0]) and made(good[1]))

    def test_a_candidate_boo_cannot_take_stays_with_pytorch(self):
        # A float64 conv: no signature (boo takes float32, float16 and bfloat16): neither warmed nor taken,
        # with the check's warning; the rest of the graph is warmed and rewritten.
        def mixed(x, w, x64, w64):
            return F.conv2d(x, w), F.conv2d(x64, w64)

        gm = with_example_values(torch.fx.symbolic_trace(mixed), lambda: [
            torch.ones(2, 8, 6, 6, device="cuda"), torch.ones(8, 8, 1, 1, device="cuda"),
            torch.ones(2, 8, 6, 6, device="cuda", dtype=torch.float64),
            torch.ones(8, 8, 1, 1, device="cuda", dtype=torch.float64)])
        spy = Spy()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            counts = spy.rewrite(gm)
        self.assertEqual(counts["conv"], 1)
        self.assertEqual(len(spy.prepared), 1)
        self.assertEqual(len(spy.prepared[0][0]), 1, spy.prepared)
        self.assertTrue(any("float64" in str(w.message) for w in caught), [str(w.message) for w in caught])

    def test_bad_thread_count_and_cpu_graphs(self):
        with unittest.mock.patch.dict(os.environ, {"BOO_COMPILE_JOBS": "many"}):
            with self.assertRaisesRegex(ValueError, "BOO_COMPILE_JOBS='many'"):
                boo_compile.rewrite(graph_module())
        spy = Spy()
        spy.rewrite(graph_module("cpu"))
        self.assertEqual(spy.prepared, [])


if __name__ == "__main__":
    if not os.environ.get("BOO_CUDA_DRIVER_DIR"):
        sys.exit("set BOO_CUDA_DRIVER_DIR to tests/fake_cuda's library folder (ctest python.compile_warmup_fake does)")
    unittest.main()
