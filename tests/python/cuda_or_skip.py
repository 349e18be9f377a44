"""Exit 77 (ctest's SKIP_RETURN_CODE) when a test asked to run on CUDA finds no CUDA device, so the run
reads "skipped", not "passed". Where a GPU is expected (BOO_REQUIRE_GPU=1, as scripts/gpu-check.sh
sets) its absence is a failure."""
import os
import sys


def cuda_or_skip(device):
    import torch
    if device != "cuda" or torch.cuda.is_available():
        return
    if os.environ.get("BOO_REQUIRE_GPU") == "1":
        sys.exit("no CUDA device, and BOO_REQUIRE_GPU=1 requires one: FAILED")
    print("no CUDA device: SKIPPED")
    sys.exit(77)
