"""The smallest GPU use of the Python package: one boo.ops.conv on CUDA tensors
against torch.nn.functional.conv2d. scripts/gpu-check.sh's pydebug stage runs
it under cuda-gdb, so a crash inside the extension prints a native backtrace."""
import torch

import boo
from boo import _C

print("boo libraries:", _C.libraries(), flush=True)
x = torch.randn(2, 8, 8, 8, device="cuda")
w = torch.randn(8, 8, 3, 3, device="cuda")
y = boo.ops.conv(x, w, padding=1)
torch.cuda.synchronize()
err = (y - torch.nn.functional.conv2d(x, w, padding=1)).abs().max().item()
print(f"boo.ops.conv on cuda: max |err| vs conv2d {err:.3g}")
assert err < 1e-3, err
