"""boo: a bag of ops for GPUs.

One neural-network operation, described by its signature, becomes a
specialized GPU kernel, JIT-compiled with NVRTC and cached on disk.

    sig = boo.Signature.from_command("convbfp16 -n 8 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1")
    x, w = sig.sample_args(device="cuda")
    (y,) = boo.get_launchable(sig)(x, w)

Signatures are built from typed fields too (boo.Signature.conv, .layer_norm,
.rms_norm), and with iree-turbine BOO's keyword classes (boo.ConvSignature,
boo.LayerNormSignature; README: "BOO's names").

`boo.ops` (functional ops with autograd) and the modules need PyTorch; the
signature API above needs it only for tensors.
"""
import importlib

from ._C import (Activation, ActivationKind, BatchNormMode, BatchNormPass, ConvDirection, DType, LayerNormDirection,
                 NormDirection, RmsNormDirection, Signature, TensorSpec, __version__, git_commit)
from .cache import clear_cache, is_cache_enabled, set_cache_dir, toggle_cache_on, use_cache_dir

# What loads on first use (it needs PyTorch), by module.
_LAZY = {
    "launch": ("Launchable", "get_launchable", "sample_args"),
    "compile": ("backend",),
    "nn": ("replace_modules", "replace_convs_with_boo", "replace_conv2d_with_boo_conv"),
    "ops": ("enable_backward", "disable_backward", "is_boo_backward_enabled"),
    "reference": ("get_nn_module",),
    "turbine": ("ConvSignature", "ConvMode", "LayerNormSignature", "LayerNormMode", "RMSNormSignature",
                "RMSNormMode"),
}

__all__ = ["Signature", "TensorSpec", "DType", "Activation", "ActivationKind", "ConvDirection", "NormDirection",
           "BatchNormMode", "BatchNormPass",
           "LayerNormDirection", "RmsNormDirection", "ops", "nn", "compile", "reference", "turbine", "clear_cache", "is_cache_enabled",
           "set_cache_dir", "toggle_cache_on", "use_cache_dir", "__version__", "git_commit",
           *(name for names in _LAZY.values() for name in names)]


def _signature_sample_args(self, device="cpu", seed=10, splat_value=None):
    """The driver's seeded inputs of this signature on `device` (PyTorch tensors); with
    `splat_value`, every argument filled with that value."""
    return importlib.import_module(".launch", __name__).sample_args(self, device, seed, splat_value)


def _signature_get_nn_module(self):
    """The PyTorch reference module of this signature: forward(*arguments) -> results."""
    return importlib.import_module(".reference", __name__).get_nn_module(self)


# Methods that need PyTorch are attached here, so that the extension itself does not depend on it.
Signature.sample_args = _signature_sample_args
Signature.get_nn_module = _signature_get_nn_module


def __getattr__(name):
    # The PyTorch-facing parts load on first use, so `import boo` works without PyTorch.
    if name in ("ops", "nn", "compile", "reference", "turbine"):
        return importlib.import_module("." + name, __name__)
    for module, names in _LAZY.items():
        if name in names:
            return getattr(importlib.import_module("." + module, __name__), name)
    raise AttributeError(f"module 'boo' has no attribute '{name}'")
