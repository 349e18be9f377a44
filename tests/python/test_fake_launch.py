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

import torch

import boo


def main():
    if not os.environ.get("BOO_CUDA_DRIVER_DIR"):
        sys.exit("set BOO_CUDA_DRIVER_DIR to tests/fake_cuda's library folder (ctest python.fake_launch does)")
    print("libraries:", boo._C.libraries())
    for command in ("convbfp16 -n 2 -c 5 -H 6 -W 6 -k 8 -y 3 -x 3 -p 1 -q 1 -F 1 --in_layout NHWC "
                    "--fil_layout NHWC --out_layout NHWC",       # channel-padded forward
                    "conv -n 2 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -F 4",  # split-K weight gradient
                    "layernormbfp16 -X 64x768 -o 1 -m 1 -F 14",
                    "t5layernormbfp16 -X 64x768 -m 5 -F 0"):
        sig = boo.Signature.from_command(command)
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
    print("ok")


if __name__ == "__main__":
    main()
