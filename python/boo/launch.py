"""Signatures made callable on PyTorch tensors."""
import functools

import torch

from . import _C, _tensors


def sample_args(sig, device="cpu", seed=10, splat_value=None):
    """The driver's seeded inputs for `sig` (BOO's seed is 10), on `device`; with
    `splat_value`, every argument filled with that value instead (BOO's driver option)."""
    if splat_value is not None:
        return [torch.empty_strided(s.shape, s.strides, dtype=_tensors.dtype_of(s), device=device).fill_(splat_value)
                for s in sig.arguments]
    data = _C.sample_args(sig, seed)
    return [_tensors.from_storage_bytes(b, spec, device) for b, spec in zip(data, sig.arguments)]


# PyTorch's raw current-stream query (no Stream object), looked up once: it is read on every launch.
_RAW_CURRENT_STREAM = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _current_stream(index):
    """The raw handle of PyTorch's current CUDA stream on device `index` (0: the legacy default stream)."""
    if _RAW_CURRENT_STREAM is not None:
        return _RAW_CURRENT_STREAM(index)
    return torch.cuda.current_stream(index).cuda_stream


class Launchable:
    """Runs one signature: on the GPU through boo's kernels (on the current
    CUDA stream, zero-copy), on the CPU through the float64 reference."""

    def __init__(self, sig):
        self.signature = sig
        # The specs (_tensors.Spec), read once: every call checks tensors against them.
        self.arguments = [_tensors.Spec.of(s) for s in sig.arguments]
        self.results = [_tensors.Spec.of(s) for s in sig.results]
        self._workspace_bytes = {}  # by device index: the scratch memory a launch needs

    def __call__(self, *args):
        sig = self.signature
        if len(args) != len(self.arguments):
            raise ValueError(f"{sig.func_name} takes {len(self.arguments)} tensors "
                             f"({', '.join(s.name for s in self.arguments)}), got {len(args)}")
        if args and args[0].is_cuda:
            index = args[0].get_device()
            # The device as its index: PyTorch reads an int as that CUDA device, cheaper than args[0].device.
            return self._launch(args, index, index, index, _current_stream(index))
        device = args[0].device if args else torch.device("cpu")
        if device.type != "cpu":
            raise ValueError(f"boo runs on CUDA and CPU tensors, not {device.type}")
        if any(a.device != device for a in args):
            self._raise_device_mismatch(args)
        args = [_tensors.conform(a, spec) for a, spec in zip(args, self.arguments)]
        # detach(): DLPack refuses tensors that require grad (a view, no copy).
        data = _C.run_reference(sig, [a.detach() if a.requires_grad else a for a in args])
        return [_tensors.from_storage_bytes(b, spec, device) for b, spec in zip(data, sig.results)]

    def _launch(self, args, index, gpu, device, stream):
        """The hot path of eager calls: tensors on PyTorch's device index `index` (as get_device() says),
        launched on boo's GPU `gpu` on `stream` (a raw CUstream handle), results on `device`. Device
        indices as ints: torch.device objects cost more than the rest of the checks. conform(): each
        tensor then has its spec's shape, dtype, strides and 16-byte alignment, so it crosses by address,
        zero-copy, without DLPack. (tests/python/test_host_overhead_fake.py runs it on host memory, index
        -1, through the fake driver's GPU 0.)"""
        addresses = []
        for a, spec in zip(args, self.arguments):
            if a.get_device() != index:
                self._raise_device_mismatch(args)
            # conform()'s first case inline (a tensor already as the spec wants it): no call, one data_ptr().
            address = a.data_ptr()
            if address % 16 or a.shape != spec.shape or a.dtype is not spec.dtype or a.stride() != spec.strides:
                address = _tensors.conform(a, spec).data_ptr()
            addresses.append(address)
        results = [torch.empty_strided(s.shape, s.strides, dtype=s.dtype, device=device) for s in self.results]
        # The workspace from PyTorch's caching allocator (a CUDA graph's pool while one is captured),
        # freed when the call returns: the allocator reuses it only for work queued after the launch.
        workspace_bytes = self._workspace_bytes.get(gpu)
        if workspace_bytes is None:
            workspace_bytes = self._workspace_bytes[gpu] = _C.workspace_bytes(self.signature, gpu, stream)
        if workspace_bytes:
            workspace = torch.empty(workspace_bytes, dtype=torch.uint8, device=device)
            _C.launch_addresses(self.signature, addresses, [r.data_ptr() for r in results], gpu, stream,
                                workspace.data_ptr())
        else:
            _C.launch_addresses(self.signature, addresses, [r.data_ptr() for r in results], gpu, stream)
        return results

    def _raise_device_mismatch(self, args):
        first = self.arguments[0].name
        for a, spec in zip(args, self.arguments):
            if a.device != args[0].device:
                raise ValueError(f"'{spec.name}' is on {a.device}, '{first}' on {args[0].device}")


@functools.lru_cache(maxsize=4096)
def _launchable_of(sig):
    return Launchable(sig)


def get_launchable(sig):
    """A callable that runs `sig` (a boo.Signature, a driver command, or a BOO
    signature class such as boo.ConvSignature) on tensors laid out as
    sig.arguments and returns new tensors laid out as sig.results (one per
    signature object)."""
    if isinstance(sig, str):
        sig = _C.Signature.from_command(sig)
    elif not isinstance(sig, _C.Signature):
        sig = sig.signature
    return _launchable_of(sig)
