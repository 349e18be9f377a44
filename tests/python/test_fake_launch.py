#!/usr/bin/env python3
"""boo's Python launch path through the whole host side on a machine without a
GPU: run with BOO_CUDA_DRIVER_DIR pointing at tests/fake_cuda's library (ctest
python.fake_launch does), so that `_C.launch_addresses` creates a runtime,
compiles the kernels with NVRTC, plans and "launches" them. The fake driver
computes nothing: what is checked is that every step gets through, that the
launchable is kept per signature, and the errors.
"""
import os
import sys
import tempfile
from pathlib import Path

import torch

import boo


def main():
    if not os.environ.get("BOO_CUDA_DRIVER_DIR"):
        sys.exit("set BOO_CUDA_DRIVER_DIR to tests/fake_cuda's library folder (ctest python.fake_launch does)")
    print("libraries:", boo._C.libraries())
    from boo import ops
    commands = ["convbfp16 -n 2 -c 5 -H 6 -W 6 -k 8 -y 3 -x 3 -p 1 -q 1 -F 1 --in_layout NHWC "
                "--fil_layout NHWC --out_layout NHWC",       # channel-padded forward
                "conv -n 2 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -F 4",  # split-K weight gradient
                "layernormbfp16 -X 64x768 -o 1 -m 1 -F 14",
                "t5layernormbfp16 -X 64x768 -m 5 -F 0"]
    # What boo.ops.batch_norm and group_norm build for a channels-last bfloat16 layer (PyTorch's mixed
    # batch norm: float32 parameters and statistics), bound by the names boo.ops passes.
    typed = [ops.batch_norm_signature((4, 16, 6, 6), torch.bfloat16, "NHWC", "training", True, 1e-5, 0.1),
             ops.batch_norm_signature((4, 16, 6, 6), torch.bfloat16, "NHWC", "inference", True, 1e-5),
             ops.batch_norm_signature((4, 16, 6, 6), torch.bfloat16, "NHWC", "backward", False, 1e-5),
             ops.group_norm_signature((2, 16, 6, 6), torch.bfloat16, 4, True, 1e-5, "NHWC", "forward"),
             ops.group_norm_signature((2, 16, 6, 6), torch.bfloat16, 4, True, 1e-5, "NHWC", "backward")]
    for sig in [boo.Signature.from_command(c) for c in commands] + typed:
        # Host tensors stand for device memory: the fake driver's memory is host memory.
        args = boo.sample_args(sig, "cpu")
        results = [torch.empty_strided(s.shape, s.strides, dtype=boo._tensors.dtype_of(s)) for s in sig.results]
        for _ in range(2):  # the second launch reuses the signature's launchable
            boo._C.launch_addresses(sig, [a.data_ptr() for a in args], [r.data_ptr() for r in results], 0, 0)
        print("launched:", sig.func_name)
    try:
        boo._C.launch_addresses(sig, [args[0].data_ptr()], [], 0, 0)
    except ValueError as e:
        assert "takes" in str(e), e
    else:
        raise AssertionError("a wrong argument count was accepted")
    check_cache_settings()
    print("ok")


def launch(sig):
    args = boo.sample_args(sig, "cpu")
    results = [torch.empty_strided(s.shape, s.strides, dtype=boo._tensors.dtype_of(s)) for s in sig.results]
    boo._C.launch_addresses(sig, [a.data_ptr() for a in args], [r.data_ptr() for r in results], 0, 0)


def check_cache_settings():
    """boo.use_cache_dir / toggle_cache_on reach the runtime: kernels compiled afterwards are stored in the
    chosen folder, or nowhere with the cache off. The signatures are unlike any other test's, so each
    compiles here rather than loading from a cache."""
    relu6 = boo.Activation(boo.ActivationKind.CLAMP, lo=0.0, hi=6.0)
    with tempfile.TemporaryDirectory() as tmp:
        with boo.use_cache_dir(Path(tmp) / "on"):
            launch(boo.Signature.conv([1, 8, 5, 5], [8, 8, 1, 1], "float32", activation=relu6))
        stored = list((Path(tmp) / "on").rglob("*.cubin"))
        assert stored, "use_cache_dir: no kernel was stored in its folder"
        saved = boo._C.cache_settings()
        boo.set_cache_dir(Path(tmp) / "off")
        boo.toggle_cache_on(0)
        try:
            launch(boo.Signature.conv([1, 8, 5, 5], [16, 8, 1, 1], "float32", activation=relu6))
        finally:
            boo._C.set_cache_settings(*saved)
        assert not (Path(tmp) / "off").exists(), "toggle_cache_on(0): a kernel was stored anyway"
        boo._C.set_cache_settings(str(Path(tmp) / "on"), True)
        try:
            boo.clear_cache()
        finally:
            boo._C.set_cache_settings(*saved)
        assert not list((Path(tmp) / "on").rglob("*.cubin")), "clear_cache left kernels behind"
    print("cache settings: ok")


if __name__ == "__main__":
    main()
