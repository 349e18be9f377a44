"""PyTorch's computation of a boo signature (iree-turbine BOO's get_nn_module()).

The module's forward takes the signature's arguments in sig.arguments' order
and returns its results in sig.results' order (one tensor when there is one
result), in their logical shapes, computed by PyTorch's own ops: what boo's
kernels are compared with.
"""
import functools

import torch
import torch.nn.functional as F

from . import _C

__all__ = ["ReferenceModule", "get_nn_module"]

_CONVS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_TRANSPOSED_CONVS = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _activation_fn(activation):
    kind = _C.ActivationKind
    return {
        kind.NONE: lambda z: z,
        kind.RELU: F.relu,
        kind.SIGMOID: torch.sigmoid,
        kind.TANH: torch.tanh,
        kind.SILU: F.silu,
        kind.GELU: F.gelu,
        kind.GELU_TANH: functools.partial(F.gelu, approximate="tanh"),
        kind.LEAKY_RELU: functools.partial(F.leaky_relu, negative_slope=activation.alpha),
        kind.CLAMP: functools.partial(torch.clamp, min=activation.lo, max=activation.hi),
    }[activation.kind]


def _conv(f, a, dtype):
    """The results of a conv signature with fields `f` from its arguments by name `a`."""
    d = _C.ConvDirection
    spatial = len(f["input_shape"]) - 2
    out = {}
    if f["direction"] & d.FORWARD:
        if f["transposed"]:
            z = _TRANSPOSED_CONVS[spatial](a["x"], a["w"], a.get("b"), f["stride"], f["padding"],
                                           f["output_padding"], f["groups"], f["dilation"])
        else:
            z = _CONVS[spatial](a["x"], a["w"], a.get("b"), f["stride"], f["padding"], f["dilation"], f["groups"])
        if f["residual"]:
            z = z + a["z"]  # before the activation
        out["y"] = _activation_fn(f["activation"])(z)
    mask = [bool(f["direction"] & d.BACKWARD_DATA), bool(f["direction"] & d.BACKWARD_WEIGHT),
            bool(f["direction"] & d.BACKWARD_BIAS)]
    if any(mask):
        # A gradient needs only the shape of the operand it does not read.
        x = a.get("x", torch.zeros(f["input_shape"], dtype=dtype, device=a["dy"].device))
        w = a.get("w", torch.zeros(f["weight_shape"], dtype=dtype, device=a["dy"].device))
        bias_sizes = [a["dy"].shape[1]] if mask[2] else None
        out["dx"], out["dw"], out["db"] = torch.ops.aten.convolution_backward(
            a["dy"], x, w, bias_sizes, f["stride"], f["padding"], f["dilation"], f["transposed"],
            f["output_padding"], f["groups"], mask)
    return out


def _leading_dims(f):
    return tuple(range(len(f["input_shape"]) - len(f["normalized_shape"])))


def _layer_norm(f, a, dtype):
    d = _C.LayerNormDirection
    out = {}
    if f["direction"] & d.FORWARD:
        out["y"], mean, rstd = torch.native_layer_norm(a["x"], f["normalized_shape"], a.get("weight"),
                                                       a.get("bias"), f["eps"])
        out["mean"], out["rstd"] = mean.float(), rstd.float()
        return out
    dy = a["dy"]
    if f["direction"] & d.BACKWARD_DATA:
        # In float32, the dtype of the statistics (ATen takes one dtype for all).
        weight = a["weight"].float() if "weight" in a else None
        out["dx"] = torch.ops.aten.native_layer_norm_backward(
            dy.float(), a["x"].float(), f["normalized_shape"], a["mean"], a["rstd"], weight, None,
            [True, False, False])[0].to(dtype)
    if f["direction"] & d.BACKWARD_WEIGHT:
        xhat = (a["x"].float() - a["mean"]) * a["rstd"]
        out["dweight"] = (dy.float() * xhat).sum(_leading_dims(f)).to(dtype)
    if f["direction"] & d.BACKWARD_BIAS:
        out["dbias"] = dy.float().sum(_leading_dims(f)).to(dtype)
    return out


def _rms_norm(f, a, dtype):
    d = _C.RmsNormDirection
    normalized = tuple(range(len(_leading_dims(f)), len(f["input_shape"])))
    x = a["x"].float()
    weight = a["weight"].float() if "weight" in a else 1.0
    out = {}
    stats_shape = [f["input_shape"][i] for i in _leading_dims(f)] + [1] * len(normalized)
    if f["direction"] & d.FORWARD:
        rstd = torch.rsqrt(x.pow(2).mean(normalized, keepdim=True) + f["eps"])
        out["y"] = (x * rstd * weight).to(dtype)
        out["rstd"] = rstd.reshape(stats_shape[:len(_leading_dims(f))] or [1])
    else:
        rstd = a["rstd"].reshape(stats_shape)
    if f["direction"] & d.BACKWARD_DATA:
        xhat = x * rstd
        g = a["dy"].float() * weight
        out["dx"] = (rstd * (g - xhat * (g * xhat).mean(normalized, keepdim=True))).to(dtype)
        if f["direction"] & d.BACKWARD_WEIGHT:
            out["dweight"] = (a["dy"].float() * xhat).sum(_leading_dims(f)).to(dtype)
    return out


_OPS = {"conv": _conv, "layernorm": _layer_norm, "rmsnorm": _rms_norm}


class ReferenceModule(torch.nn.Module):
    """PyTorch's computation of `sig`: forward(*sig.arguments) -> sig.results."""

    def __init__(self, sig):
        super().__init__()
        if sig.op_name not in _OPS:
            raise NotImplementedError(f"{sig.op_name} signatures have no reference module")
        self.signature = sig
        self._fields = sig.fields
        self._compute = _OPS[sig.op_name]
        self._argument_names = [spec.name for spec in sig.arguments]
        self._result_names = [spec.name for spec in sig.results]
        self._dtype = getattr(torch, self._fields["dtype"].name)

    def forward(self, *args):
        if len(args) != len(self._argument_names):
            raise ValueError(f"{self.signature.func_name} takes {len(self._argument_names)} tensors "
                             f"({', '.join(self._argument_names)}), got {len(args)}")
        results = self._compute(self._fields, dict(zip(self._argument_names, args)), self._dtype)
        outputs = tuple(results[name] for name in self._result_names)
        return outputs[0] if len(outputs) == 1 else outputs


def get_nn_module(sig):
    """The PyTorch reference module of a boo signature (BOO's get_nn_module())."""
    return ReferenceModule(sig)
