"""boo: a bag of ops for GPUs.

One neural-network operation, described by its signature, becomes a
specialized GPU kernel, JIT-compiled with NVRTC and cached on disk.

    sig = boo.Signature.from_command("convbfp16 -n 8 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1")
    x, w = sig.sample_args(device="cuda")
    (y,) = boo.get_launchable(sig)(x, w)

`boo.ops` (functional ops with autograd) and the modules need PyTorch; the
signature API above needs it only for tensors.
"""
import importlib

from ._C import Signature, TensorSpec, __version__, git_commit

__all__ = ["Signature", "TensorSpec", "Launchable", "get_launchable", "sample_args", "ops", "nn", "replace_modules",
           "compile", "backend", "__version__", "git_commit"]


def _signature_sample_args(self, device="cpu", seed=10):
    """The driver's seeded inputs of this signature on `device` (PyTorch tensors)."""
    return importlib.import_module(".launch", __name__).sample_args(self, device, seed)


# Methods that need PyTorch are attached here, so that the extension itself does not depend on it.
Signature.sample_args = _signature_sample_args


def __getattr__(name):
    # The PyTorch-facing parts load on first use, so `import boo` works without PyTorch.
    if name in ("Launchable", "get_launchable", "sample_args"):
        return getattr(importlib.import_module(".launch", __name__), name)
    if name in ("ops", "nn", "compile"):
        return importlib.import_module("." + name, __name__)
    if name == "backend":
        return importlib.import_module(".compile", __name__).backend
    if name == "replace_modules":
        return importlib.import_module(".nn", __name__).replace_modules
    raise AttributeError(f"module 'boo' has no attribute '{name}'")
