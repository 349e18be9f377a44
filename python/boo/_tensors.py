"""Tensors in and out of boo's signatures: dtypes, layouts, copies."""
import logging
from typing import NamedTuple, Tuple

import torch

log = logging.getLogger("boo")

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}

# Inputs copied because their memory did not match what the signature needs
# (strides or alignment); reported in debug logs and readable by tests.
copied_inputs = 0


def dtype_of(spec):
    return DTYPES[spec.dtype]


class Spec(NamedTuple):
    """A TensorSpec's fields as Python values (reading boo._C's spec builds new lists every time)."""
    name: str
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    dtype: torch.dtype

    @staticmethod
    def of(spec):
        return Spec(spec.name, tuple(spec.shape), tuple(spec.strides), dtype_of(spec))


def from_storage_bytes(data, spec, device):
    """A tensor over storage bytes laid out in the spec's strides (from boo._C)."""
    flat = torch.frombuffer(bytearray(data), dtype=dtype_of(spec))
    return flat.as_strided(spec.shape, spec.strides).to(device)


def conform(t, spec):
    """`t` (checked against `spec`, a Spec) with the spec's strides: a view when only the
    strides of size-1 dimensions differ, else a copy (counted, and logged at debug level)."""
    global copied_inputs
    if t.shape != spec.shape:
        raise ValueError(f"'{spec.name}': expected shape {list(spec.shape)}, got {list(t.shape)}")
    if t.dtype != spec.dtype:
        raise ValueError(f"'{spec.name}': expected {spec.dtype}, got {t.dtype}")
    strides, wanted = t.stride(), spec.strides
    aligned = t.is_cpu or t.data_ptr() % 16 == 0
    if aligned and strides == wanted:
        return t
    if aligned and all(s == w or n == 1 for s, w, n in zip(strides, wanted, t.shape)):
        return t.as_strided(spec.shape, spec.strides)
    copied_inputs += 1
    log.debug("boo: copying '%s' %s strides %s into the signature's strides %s", spec.name, list(t.shape),
              list(strides), list(wanted))
    return torch.empty_strided(spec.shape, spec.strides, dtype=spec.dtype, device=t.device).copy_(t)
