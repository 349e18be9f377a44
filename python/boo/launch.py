"""Signatures made callable on PyTorch tensors."""
import torch

from . import _C, _tensors


def sample_args(sig, device="cpu", seed=10):
    """The driver's seeded inputs for `sig` (BOO's seed is 10), on `device`."""
    data = _C.sample_args(sig, seed)
    return [_tensors.from_storage_bytes(b, spec, device) for b, spec in zip(data, sig.arguments)]


class Launchable:
    """Runs one signature: on the GPU through boo's kernels (on the current
    CUDA stream, zero-copy), on the CPU through the float64 reference."""

    def __init__(self, sig):
        self.signature = sig

    def __call__(self, *args):
        sig = self.signature
        if len(args) != len(sig.arguments):
            raise ValueError(f"{sig.func_name} takes {len(sig.arguments)} tensors "
                             f"({', '.join(s.name for s in sig.arguments)}), got {len(args)}")
        device = args[0].device if args else torch.device("cpu")
        for a, spec in zip(args, sig.arguments):
            if a.device != device:
                raise ValueError(f"'{spec.name}' is on {a.device}, '{sig.arguments[0].name}' on {device}")
        args = [_tensors.conform(a, spec) for a, spec in zip(args, sig.arguments)]
        if device.type == "cuda":
            results = [_tensors.empty(spec, device) for spec in sig.results]
            stream = torch.cuda.current_stream(device).cuda_stream
            # detach(): DLPack refuses tensors that require grad (a view, no copy).
            _C.launch(sig, [a.detach() for a in args], results, device.index or 0, stream)
            return results
        if device.type != "cpu":
            raise ValueError(f"boo runs on CUDA and CPU tensors, not {device.type}")
        data = _C.run_reference(sig, [a.detach() for a in args])
        return [_tensors.from_storage_bytes(b, spec, device) for b, spec in zip(data, sig.results)]


def get_launchable(sig):
    """A callable that runs `sig` on tensors laid out as sig.arguments and
    returns new tensors laid out as sig.results."""
    if isinstance(sig, str):
        sig = _C.Signature.from_command(sig)
    return Launchable(sig)
