"""boo's ops for PyTorch: convolution, layer, RMS, batch and group norm, matmul and linear as torch.library custom
ops (traceable by torch.compile through their fake implementations) with
autograd whose backward runs boo's backward kernels.

On CUDA tensors they run boo's GPU kernels on the current stream; on CPU
tensors the float64 reference (exact, slow: for tests and small problems).
Set BOO_USE_BACKWARD_KERNELS=0, or call disable_backward(), to compute
gradients with PyTorch instead (enable_backward() turns boo's back on).
A valid call boo cannot run (a signature it does not support, kernels that do
not compile) runs on PyTorch with one warning per signature; BOO_STRICT=1
raises instead.

The ops (torch.ops.boo.*) are registered in C++ where the package was built
against this PyTorch (boo/_torch_ops.so, python/src/torch_ops.cpp): a call then
costs PyTorch's dispatch and a launch. Otherwise, or with BOO_TORCH_LIBRARY=0,
they are registered from Python here, with the same schemas (`registration`
says which).
"""
import ctypes
import functools
import math
import os
import warnings
from typing import List, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from . import _C, _tensors
from .launch import get_launchable

__all__ = ["conv", "layer_norm", "rms_norm", "batch_norm", "group_norm", "matmul", "linear", "conv_signature", "matmul_signature", "layer_norm_signature",
           "rms_norm_signature", "batch_norm_signature", "group_norm_signature", "enable_backward", "disable_backward", "is_boo_backward_enabled"]

_CONV_FNS = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}


# ---------------------------------------------------------------------------
# Registration: C++ (boo/_torch_ops.so) where it fits this PyTorch, else Python.

def _load_torch_library():
    """(the loaded C++ library, None), or (None, why the ops are registered from Python)."""
    if os.environ.get("BOO_TORCH_LIBRARY", "1") == "0":
        return None, "BOO_TORCH_LIBRARY=0"
    try:
        from . import _torch_build
    except ImportError:
        return None, "boo was built without PyTorch's C++ headers"
    if _torch_build.TORCH_VERSION != torch.__version__:
        # Loading it into another PyTorch could crash the process: a reinstall builds it for this one.
        warnings.warn(f"boo: boo/_torch_ops.so was built for PyTorch {_torch_build.TORCH_VERSION}, this is "
                      f"{torch.__version__}: boo's ops are registered from Python (slower per call); reinstall "
                      "boo (pip install .) to build them for this PyTorch", stacklevel=3)
        return None, f"built for PyTorch {_torch_build.TORCH_VERSION}, running {torch.__version__}"
    path = os.path.join(os.path.dirname(__file__), "_torch_ops.so")
    torch.ops.load_library(path)
    library = ctypes.CDLL(path)  # the same handle: its C functions
    library.boo_torch_init.restype = ctypes.c_uint32
    version = library.boo_torch_init(ctypes.c_void_p(_C._torch_bridge()))
    if version:
        raise ImportError(f"boo/_torch_ops.so and boo._C disagree on their interface (version {version}): "
                          "reinstall boo")
    return library, None


_TORCH_LIBRARY, _PYTHON_REASON = _load_torch_library()
# Which registration torch.ops.boo.* has: "C++" or "Python (<why>)".
registration = "C++" if _TORCH_LIBRARY is not None else f"Python ({_PYTHON_REASON})"
# The ops whose CUDA kernel and autograd the C++ registration has (torch_ops.cpp); every other kernel,
# and every fake implementation, is this module's.
_CPP_OPS = ("conv", "conv_backward", "batch_norm") if _TORCH_LIBRARY is not None else ()
_CPP_AUTOGRAD = ("conv", "batch_norm") if _TORCH_LIBRARY is not None else ()
_IMPLS = torch.library.Library("boo", "IMPL") if _TORCH_LIBRARY is not None else None


def _cpp_counters():
    """(launches, copied inputs) of the C++ registration's CUDA kernels so far, which bypass
    boo.launch.Launchable and _tensors.copied_inputs; (0, 0) on the Python registration. For tests."""
    if _TORCH_LIBRARY is None:
        return 0, 0
    out = (ctypes.c_uint64 * 2)()
    _TORCH_LIBRARY.boo_torch_counters(out)
    return out[0], out[1]


def _op(name, kernel):
    """torch.ops.boo.<name>, with `kernel` as its kernel: from its annotations by torch.library.custom_op,
    or on the C++ registration's schema for the CPU key (the float64 reference; and the fallback of the
    C++ CUDA kernels) and, where C++ has none, for CUDA."""
    if _TORCH_LIBRARY is None:
        return torch.library.custom_op(f"boo::{name}", mutates_args=())(kernel)
    _IMPLS.impl(name, kernel, "CPU")
    if name not in _CPP_OPS:
        _IMPLS.impl(name, kernel, "CUDA")
    return getattr(torch.ops.boo, name).default


def _fake(name):
    """Registers the decorated function as boo::<name>'s fake implementation."""
    return torch.library.register_fake(f"boo::{name}")


# enable_backward()/disable_backward()'s choice; None: BOO_USE_BACKWARD_KERNELS decides (default on).
_backward_kernels = None


def _set_backward_kernels(choice):
    """enable_backward() (True), disable_backward() (False), or back to BOO_USE_BACKWARD_KERNELS (None),
    for the C++ autograd too."""
    global _backward_kernels
    _backward_kernels = choice
    if _TORCH_LIBRARY is not None:
        _TORCH_LIBRARY.boo_torch_set_backward_kernels(-1 if choice is None else int(choice))


def enable_backward():
    """Gradients through boo's backward kernels (the default), whatever BOO_USE_BACKWARD_KERNELS says."""
    _set_backward_kernels(True)


def disable_backward():
    """Gradients through PyTorch's backward (aten), whatever BOO_USE_BACKWARD_KERNELS says."""
    _set_backward_kernels(False)


def is_boo_backward_enabled():
    """Whether gradients run boo's backward kernels."""
    if _backward_kernels is not None:
        return _backward_kernels
    return os.environ.get("BOO_USE_BACKWARD_KERNELS", "1") != "0"


# ---------------------------------------------------------------------------
# Layouts: PyTorch strides <-> MIOpen layout strings.

def _letters(rank):
    """Logical dimension letters of a conv activation: NCH, NCHW, NCDHW."""
    return {3: "NCH", 4: "NCHW", 5: "NCDHW"}[rank]


def _channels_last(rank):
    logical = _letters(rank)
    return logical[0] + logical[2:] + logical[1]


def layout_of(t):
    """The layout string of a conv tensor: channels-first when contiguous,
    channels-last when PyTorch's channels_last (any rank), else channels-first
    (the tensor is then copied)."""
    rank = t.dim()
    if t.is_contiguous():
        return _letters(rank)
    # Dense channels-last by PyTorch's own check first (this runs on every call), then any
    # other tensor by the order of its strides.
    memory_format = {4: torch.channels_last, 5: torch.channels_last_3d}.get(rank)
    if memory_format is not None and t.is_contiguous(memory_format=memory_format):
        return _channels_last(rank)
    order = sorted(range(rank), key=lambda d: -t.stride(d))
    if order == [0] + list(range(2, rank)) + [1]:
        return _channels_last(rank)
    return _letters(rank)


def _check_layout(name, layout, rank):
    if layout is None:
        return None
    valid = {_letters(rank), _channels_last(rank)}
    layout = layout.upper()
    if sorted(layout) != sorted(_letters(rank)):
        raise ValueError(f"{name}={layout!r}: expected a permutation of {_letters(rank)} "
                         f"(e.g. {' or '.join(sorted(valid))}) for a {rank - 2}-D convolution")
    return layout


def _tuple(value, n, name):
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    if len(value) != n:
        raise ValueError(f"{name}: expected an int or {n} ints, got {value}")
    return value


# ---------------------------------------------------------------------------
# Signatures.

_DTYPES = {torch.float32: _C.DType.float32, torch.float16: _C.DType.float16, torch.bfloat16: _C.DType.bfloat16}
_GRADIENTS = {"input": _C.ConvDirection.BACKWARD_DATA, "weight": _C.ConvDirection.BACKWARD_WEIGHT}


def _boo_dtype(dtype, op):
    if dtype not in _DTYPES:
        raise ValueError(f"{op}: dtype {dtype} is not supported; boo takes float32, float16 and bfloat16")
    return _DTYPES[dtype]


@functools.lru_cache(maxsize=256)
def _activation(activation):
    """boo's Activation for an activation name (see _activation_fn for the accepted spellings)."""
    _activation_fn(activation)  # checks the spelling
    name, _, args = activation.partition(":")
    kind = _C.ActivationKind[name.upper()]
    if name == "leaky_relu":
        return _C.Activation(kind, alpha=float(args) if args else 0.01)
    if name == "clamp":
        lo, hi = (float(v) for v in args.split(":"))
        return _C.Activation(kind, lo=lo, hi=hi)
    return _C.Activation(kind)


def conv_tf32(dtype):
    """Whether a conv of `dtype` runs on TF32 tensor cores (--fp32-math tf32): float32 where PyTorch's own
    convolutions would, torch.backends.cudnn.allow_tf32 (PyTorch's default: on)."""
    return dtype == torch.float32 and torch.backends.cudnn.allow_tf32


def conv_signature(x_shape, w_shape, dtype, stride, padding, dilation, groups, bias, activation, layouts, direction,
                   residual=False):
    """The boo signature of a convolution. `direction`: "forward", or a set of
    gradients among "input", "weight", "bias" (the bias gradient only when `bias`);
    layouts: (input, kernel, output). `residual`: the forward adds a tensor z of
    the output's shape and layout before the activation (--residual 1). A float32
    conv runs on TF32 tensor cores where torch.backends.cudnn.allow_tf32 is set
    (conv_tf32), as PyTorch's convolutions do."""
    return _conv_signature(x_shape, w_shape, dtype, stride, padding, dilation, groups, bias, activation, layouts,
                           direction, residual, conv_tf32(dtype))


@functools.lru_cache(maxsize=4096)
def _conv_signature(x_shape, w_shape, dtype, stride, padding, dilation, groups, bias, activation, layouts, direction,
                    residual, tf32):
    if direction == "forward":
        directions = _C.ConvDirection.FORWARD
    else:
        directions = _C.ConvDirection(0)
        for gradient in direction:
            if gradient in _GRADIENTS:
                directions |= _GRADIENTS[gradient]
        if bias and "bias" in direction:
            directions |= _C.ConvDirection.BACKWARD_BIAS
    return _C.Signature.conv(list(x_shape), list(w_shape), _boo_dtype(dtype, "conv"), stride=list(stride),
                             padding=list(padding), dilation=list(dilation), groups=groups,
                             input_layout=layouts[0], weight_layout=layouts[1], output_layout=layouts[2],
                             direction=directions, bias=bias and direction == "forward",
                             activation=_activation(activation or "none"), tf32=tf32, residual=residual)


def conv_backward_signatures(x_shape, w_shape, dtype, stride, padding, dilation, groups, bias, layouts, wanted):
    """One backward signature per gradient in `wanted` ("input", "weight", "bias"; the bias gradient only with
    `bias`). Each gradient dispatches on its own: the Hopper tier plans one direction at a time, so a signature
    asking for dx and dw together would put both on the tier that runs every face in one plan (mma.sync)."""
    return [conv_signature(x_shape, w_shape, dtype, stride, padding, dilation, groups, bias, "none", layouts,
                           frozenset((gradient,)))
            for gradient in ("input", "weight", "bias") if gradient in wanted and (gradient != "bias" or bias)]


@functools.lru_cache(maxsize=4096)
def layer_norm_signature(x_shape, normalized_ndim, dtype, has_weight, has_bias, eps, direction):
    """direction: a boo.LayerNormDirection (FORWARD, or backward flags)."""
    return _C.Signature.layer_norm(list(x_shape), list(x_shape[len(x_shape) - normalized_ndim:]),
                                   _boo_dtype(dtype, "layer_norm"), eps=float(eps), weight=has_weight,
                                   bias=has_bias, direction=direction)


@functools.lru_cache(maxsize=4096)
def rms_norm_signature(x_shape, normalized_ndim, dtype, has_weight, eps, direction):
    """direction: "forward" or "backward" (dx, and dweight with a weight: one kernel)."""
    flags = _C.RmsNormDirection
    if direction == "forward":
        directions = flags.FORWARD
    else:
        directions = flags.BACKWARD_DATA | flags.BACKWARD_WEIGHT if has_weight else flags.BACKWARD_DATA
    return _C.Signature.rms_norm(list(x_shape), list(x_shape[len(x_shape) - normalized_ndim:]),
                                 _boo_dtype(dtype, "rms_norm"), eps=float(eps), weight=has_weight,
                                 direction=directions)


_BATCH_NORM_PASSES = {"training": _C.BatchNormPass.TRAINING, "inference": _C.BatchNormPass.INFERENCE,
                      "backward": _C.BatchNormPass.BACKWARD}


@functools.lru_cache(maxsize=4096)
def batch_norm_signature(x_shape, dtype, layout, pass_, running, eps, momentum=1.0):
    """PyTorch's batch norm (one statistic per channel) of an (N, C, H, W) or (N, C, D, H, W) input in
    `layout`: pass_ "training" (batch statistics, saving the mean and inverse std; with `running`, the
    running statistics updated by `momentum` as well), "inference" (from the running statistics) or
    "backward" (dx, dweight, dbias from the saved statistics). Scale, bias and statistics are float32
    whatever the dtype. `momentum` is a kernel argument, but part of the signature: pass 1.0 where it does
    not apply (MIOpen's default), so those share one signature."""
    return _C.Signature.batch_norm(list(x_shape), _boo_dtype(dtype, "batch_norm"), layout=layout,
                                   mode=_C.BatchNormMode.SPATIAL, pass_=_BATCH_NORM_PASSES[pass_],
                                   save=pass_ != "inference", running=running, eps=float(eps),
                                   momentum=float(momentum))


@functools.lru_cache(maxsize=4096)
def group_norm_signature(x_shape, dtype, groups, affine, eps, layout, direction):
    """A group norm of an (N, C, W), (N, C, H, W) or (N, C, D, H, W) input in `layout`; direction:
    "forward" (y, float32 mean and rstd [N, groups]) or "backward" (dx, with dweight and dbias when
    `affine`: one kernel computes them)."""
    flags = _C.NormDirection
    if direction == "forward":
        directions = flags.FORWARD
    else:
        directions = flags.BACKWARD_DATA | flags.BACKWARD_WEIGHT | flags.BACKWARD_BIAS if affine \
            else flags.BACKWARD_DATA
    return _C.Signature.group_norm(list(x_shape), _boo_dtype(dtype, "group_norm"), groups=groups, eps=float(eps),
                                   affine=affine, direction=directions, layout=layout)


# ---------------------------------------------------------------------------
# Autocast: the dtype PyTorch's autocast would compute an op in, learned once
# per (op, device, autocast dtype, input dtype) by running PyTorch's op on
# one-element tensors, so boo follows PyTorch's policy on every device and
# version (convolutions in the autocast dtype; on CUDA layer_norm and group_norm
# in float32). Batch norm is on none of autocast's lists: it runs on its inputs'
# dtypes (16-bit data with float32 parameters is PyTorch's mixed batch norm).

@functools.lru_cache(maxsize=None)
def _autocast_probe(op, device_type, device_index, autocast_dtype, in_dtype):
    device = torch.device(device_type, device_index) if device_index is not None else torch.device(device_type)
    ones = functools.partial(torch.ones, dtype=in_dtype, device=device)
    with torch.autocast(device_type, dtype=autocast_dtype):
        if op == "conv":
            return F.conv1d(ones(1, 1, 1), ones(1, 1, 1)).dtype
        if op == "layer_norm":
            return F.layer_norm(ones(1, 2), (2,), ones(2), ones(2)).dtype
        if op == "group_norm":
            return F.group_norm(ones(1, 2), 1, ones(2), ones(2)).dtype
        return F.rms_norm(ones(1, 2), (2,), ones(2)).dtype


# Whether autocast is on for any device: one query where the per-device one costs a microsecond.
_ANY_AUTOCAST = getattr(torch._C, "_is_any_autocast_enabled", lambda: True)


def _autocast(op, tensors):
    """`tensors` cast as PyTorch's autocast would for `op`, or None when
    autocast is off on their device."""
    if not _ANY_AUTOCAST():
        return None
    x = tensors[0]
    if not torch.is_autocast_enabled("cuda" if x.is_cuda else x.device.type):  # is_cuda: no device object
        return None
    target = _autocast_probe(op, x.device.type, x.device.index, torch.get_autocast_dtype(x.device.type), x.dtype)
    return [t if t is None or t.dtype == target else t.to(target) for t in tensors]


def _run(sig, by_name):
    """Runs `sig` with arguments looked up by name; returns results by name."""
    launchable = get_launchable(sig)
    outputs = launchable(*[by_name[spec.name] for spec in launchable.arguments])
    return {spec.name: t for spec, t in zip(launchable.results, outputs)}


def _strict():
    return os.environ.get("BOO_STRICT", "0") != "0"


@functools.lru_cache(maxsize=None)
def _warn_fallback(what, reason):
    warnings.warn(f"boo: {what} runs on PyTorch: {reason}", stacklevel=4)


def _capturing():
    """Whether the current CUDA stream is being captured into a graph. boo's error is then raised, not
    answered by PyTorch's op: a kernel not compiled before the capture cannot be loaded in it (the error
    says to warm up), and a fallback that fails inside the capture would leave it, and PyTorch's RNG
    state, unusable for what follows."""
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


def _boo_or_torch(what, run_boo, run_torch):
    """run_boo(), or when boo cannot run this signature (it does not support
    it, or its kernels do not compile) run_torch(), with one warning per
    signature (`what()` names it); BOO_STRICT=1, or a CUDA graph capture, raises instead."""
    try:
        return run_boo()
    except (ValueError, NotImplementedError, RuntimeError) as e:
        if _strict() or _capturing():
            raise
        _warn_fallback(what(), str(e).splitlines()[0] if str(e) else type(e).__name__)
        return run_torch()


# PyTorch's private mode queries, looked up once (they are read on every eager call).
_DISPATCH_STACK_LEN = getattr(torch._C, "_len_torch_dispatch_stack", None)
_FUNCTION_MODES_ENABLED = getattr(torch._C, "_is_torch_function_mode_enabled", None)
_FUNCTORCH_ACTIVE = getattr(torch._C, "_are_functorch_transforms_active", None)


def _watched():
    """Whether a TorchDispatchMode or TorchFunctionMode (a profiler, FakeTensorMode, export's
    tracing) or a torch.func transform is watching: it must see boo's ops as ops. Unknown (private
    API gone): assume so."""
    if _DISPATCH_STACK_LEN is None or _FUNCTION_MODES_ENABLED is None or _FUNCTORCH_ACTIVE is None:
        return True
    return _DISPATCH_STACK_LEN() > 0 or _FUNCTION_MODES_ENABLED() or _FUNCTORCH_ACTIVE()


def _direct_call_allowed(*tensors):
    """Whether an eager call may run boo directly instead of through its torch.library op: the op's
    dispatch (dispatcher, autograd wrapper, dynamo guard) costs tens of microseconds of host time per
    call, more than the kernel of a small layer. Allowed only when nothing can tell the difference:
    plain tensors, no compiler tracing, nothing watching. A call that records a gradient then runs
    through an autograd.Function that applies the op's own autograd rules."""
    if torch.compiler.is_compiling() or _watched():
        return False
    return all(t is None or type(t) is torch.Tensor for t in tensors)


class _NormFunction(torch.autograd.Function):
    """A direct eager norm call that records a gradient: `run(*inputs)` is the op's forward and
    (y, statistics...), `rules` the op's autograd rules (those its torch.library registration uses),
    so the backward is the op's own. The statistics are not differentiated."""

    @staticmethod
    def forward(ctx, *inputs_rules_run):
        *inputs, rules, run = inputs_rules_run
        output = run(*inputs)
        rules.setup_context(ctx, inputs, output)
        ctx.backward_rule = rules.backward
        ctx.mark_non_differentiable(*output[1:])
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads):
        return (*ctx.backward_rule(ctx, grads), None, None)


class _AutogradRules:
    """A norm op's autograd rules, registered with boo::<name> (unless the C++ registration has the op's
    autograd: the same rules there) and reused by _NormFunction."""

    def __init__(self, name, setup_context, backward):
        self.setup_context, self.backward = setup_context, backward
        if name not in _CPP_AUTOGRAD:
            torch.library.register_autograd(f"boo::{name}", backward, setup_context=setup_context)


def _norm_direct(rules, run, *inputs):
    """run(*inputs) for a direct eager norm call, through _NormFunction when it records a gradient."""
    if torch.is_grad_enabled():
        for t in inputs:
            if isinstance(t, torch.Tensor) and t.requires_grad:
                return _NormFunction.apply(*inputs, rules, run)
    return run(*inputs)


def _restride(t, like_strides):
    """`t` copied into the given strides (fallback results must have the strides the fake implementation promised)."""
    if tuple(t.stride()) == tuple(like_strides):
        return t
    return torch.empty_strided(t.shape, like_strides, dtype=t.dtype, device=t.device).copy_(t)


# ---------------------------------------------------------------------------
# Convolution.

_ACTIVATIONS = {
    "none": lambda z: z,
    "relu": F.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "silu": F.silu,
    "gelu": F.gelu,
    "gelu_tanh": functools.partial(F.gelu, approximate="tanh"),
}


def _activation_fn(activation):
    name, _, args = activation.partition(":")
    if name in _ACTIVATIONS and not args:
        return _ACTIVATIONS[name]
    if name == "leaky_relu":
        return functools.partial(F.leaky_relu, negative_slope=float(args) if args else 0.01)
    if name == "clamp" and args.count(":") == 1:
        lo, hi = (float(v) for v in args.split(":"))
        return functools.partial(torch.clamp, min=lo, max=hi)
    raise ValueError(f"activation {activation!r}: expected none, relu, sigmoid, tanh, silu, gelu, gelu_tanh, "
                     "leaky_relu[:alpha] or clamp:lo:hi")


def _conv_output_shape(x_shape, w_shape, stride, padding, dilation):
    out = [x_shape[0], w_shape[0]]
    for size, fil, s, p, d in zip(x_shape[2:], w_shape[2:], stride, padding, dilation):
        out.append((size + 2 * p - d * (fil - 1) - 1) // s + 1)
    return out


def _strides_for(shape, layout, rank):
    logical = _letters(rank)
    order = [logical.index(ch) for ch in layout]
    strides = [0] * rank
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return strides


def _conv_forward(x: torch.Tensor, w: torch.Tensor, bias: Optional[torch.Tensor], stride: List[int], padding: List[int],
          dilation: List[int], groups: int, activation: str, layouts: str) -> torch.Tensor:
    """layouts: "input,kernel,output", e.g. "NHWC,NHWC,NHWC"."""
    layouts = tuple(layouts.split(","))

    def boo():
        sig = conv_signature(tuple(x.shape), tuple(w.shape), x.dtype, tuple(stride), tuple(padding), tuple(dilation),
                             groups, bias is not None, activation, layouts, "forward")
        return _run(sig, {"x": x, "w": w, "b": bias})["y"]

    def pytorch():
        y = _activation_fn(activation)(_CONV_FNS[x.dim()](x, w, bias, stride, padding, dilation, groups))
        return _restride(y, _strides_for(list(y.shape), layouts[2], x.dim()))

    return _boo_or_torch(lambda: f"conv {list(x.shape)} * {list(w.shape)} {x.dtype}", boo, pytorch)


_conv = _op("conv", _conv_forward)


@_fake("conv")
def _(x, w, bias, stride, padding, dilation, groups, activation, layouts):
    shape = _conv_output_shape(x.shape, w.shape, stride, padding, dilation)
    return x.new_empty_strided(shape, _strides_for(shape, layouts.split(",")[2], x.dim()))


def _conv_residual_forward(x: torch.Tensor, w: torch.Tensor, bias: Optional[torch.Tensor], residual: torch.Tensor,
                           stride: List[int], padding: List[int], dilation: List[int], groups: int, activation: str,
                           layouts: str) -> torch.Tensor:
    """act(conv(x, w) + bias + residual): the residual (the output's shape, stored in any strides) added
    in the conv's epilogue before the activation, as cuDNN's conv-bias-add-act (boo's --residual 1)."""
    layouts = tuple(layouts.split(","))

    def boo():
        sig = conv_signature(tuple(x.shape), tuple(w.shape), x.dtype, tuple(stride), tuple(padding), tuple(dilation),
                             groups, bias is not None, activation, layouts, "forward", True)
        return _run(sig, {"x": x, "w": w, "b": bias, "z": residual})["y"]

    def pytorch():
        y = _activation_fn(activation)(_CONV_FNS[x.dim()](x, w, bias, stride, padding, dilation, groups) + residual)
        return _restride(y, _strides_for(list(y.shape), layouts[2], x.dim()))

    return _boo_or_torch(lambda: f"conv {list(x.shape)} * {list(w.shape)} + residual {x.dtype}", boo, pytorch)


_conv_residual = _op("conv_residual", _conv_residual_forward)


@_fake("conv_residual")
def _(x, w, bias, residual, stride, padding, dilation, groups, activation, layouts):
    shape = _conv_output_shape(x.shape, w.shape, stride, padding, dilation)
    return x.new_empty_strided(shape, _strides_for(shape, layouts.split(",")[2], x.dim()))


def _conv_residual_setup_context(ctx, inputs, output):
    x, w, bias, residual, stride, padding, dilation, groups, activation, layouts = inputs
    # The residual only to recompute the activation's input.
    ctx.save_for_backward(x, w, bias, residual if activation != "none" else None)
    ctx.params = (stride, padding, dilation, groups, activation, layouts)


def _conv_residual_backward_rule(ctx, dy):
    """The conv's gradients and the residual's: both from the gradient at the sum conv + bias + residual,
    the activation's gradient taken first on its recomputed input."""
    x, w, bias, residual = ctx.saved_tensors
    stride, padding, dilation, groups, activation, layouts = ctx.params
    if activation != "none":
        with torch.enable_grad():
            forward = _conv_residual_forward if _direct_call_allowed(x, w, bias, residual) else _conv_residual
            u = forward(x, w, bias, residual, stride, padding, dilation, groups, "none", layouts)
            u = u.detach().requires_grad_()
            (dy,) = torch.autograd.grad(_activation_fn(activation)(u), u, dy)
    dx, dw, db = _conv_gradients(dy, x, w, bias, ctx.params, ctx.needs_input_grad[:3])
    return dx, dw, db, dy if ctx.needs_input_grad[3] else None, None, None, None, None, None, None


torch.library.register_autograd("boo::conv_residual", _conv_residual_backward_rule,
                                setup_context=_conv_residual_setup_context)


def _conv_backward_kernel(dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor, has_bias: bool, stride: List[int],
                   padding: List[int], dilation: List[int], groups: int, layouts: str,
                   output_mask: List[bool]) -> List[torch.Tensor]:
    """Gradients (dx, dw, db) through boo's backward kernels; the ones not in
    output_mask come back empty."""
    wanted = {name for name, on in zip(("input", "weight", "bias"), output_mask) if on}
    layouts = tuple(layouts.split(","))

    def boo():
        got = {}
        for sig in conv_backward_signatures(tuple(x.shape), tuple(w.shape), x.dtype, tuple(stride), tuple(padding),
                                            tuple(dilation), groups, has_bias, layouts, frozenset(wanted)):
            got.update(_run(sig, {"dy": dy, "x": x, "w": w}))
        return got

    def pytorch():
        dx, dw, db = torch.ops.aten.convolution_backward(
            dy, x, w, [w.shape[0]] if has_bias else None, stride, padding, dilation, False, [0] * len(stride), groups,
            [bool(output_mask[0]), bool(output_mask[1]), bool(output_mask[2] and has_bias)])
        return {"dx": None if dx is None else _restride(dx, _strides_for(list(x.shape), layouts[0], x.dim())),
                "dw": None if dw is None else _restride(dw, _strides_for(list(w.shape), layouts[1], w.dim())),
                "db": db}

    got = _boo_or_torch(lambda: f"conv backward {list(x.shape)} * {list(w.shape)} {x.dtype}", boo, pytorch)
    # Gradients not asked for come back as distinct empty tensors (outputs may not alias).
    return [got["dx"] if output_mask[0] else x.new_empty(0), got["dw"] if output_mask[1] else w.new_empty(0),
            got["db"] if output_mask[2] else w.new_empty(0)]


_conv_backward = _op("conv_backward", _conv_backward_kernel)


@_fake("conv_backward")
def _(dy, x, w, has_bias, stride, padding, dilation, groups, layouts, output_mask):
    layouts = layouts.split(",")
    return [x.new_empty_strided(x.shape, _strides_for(list(x.shape), layouts[0], x.dim())) if output_mask[0]
            else x.new_empty(0),
            w.new_empty_strided(w.shape, _strides_for(list(w.shape), layouts[1], w.dim())) if output_mask[1]
            else w.new_empty(0),
            w.new_empty(w.shape[0]) if output_mask[2] else w.new_empty(0)]


def _conv_setup_context(ctx, inputs, output):
    x, w, bias, stride, padding, dilation, groups, activation, layouts = inputs
    ctx.save_for_backward(x, w, bias)
    ctx.params = (stride, padding, dilation, groups, activation, layouts)


def _conv_backward_rule(ctx, dy):
    x, w, bias = ctx.saved_tensors
    stride, padding, dilation, groups, activation, layouts = ctx.params
    if activation != "none":
        # The fused activation is forward-only: recompute its input z = conv(x, w) + b
        # and take the activation's gradient with PyTorch.
        with torch.enable_grad():
            forward = _conv_forward if _direct_call_allowed(x, w, bias) else _conv
            z = forward(x, w, bias, stride, padding, dilation, groups, "none", layouts).detach().requires_grad_()
            (dy,) = torch.autograd.grad(_activation_fn(activation)(z), z, dy)
    return (*_conv_gradients(dy, x, w, bias, ctx.params, ctx.needs_input_grad[:3]), None, None, None, None, None, None)


def _conv_gradients(dy, x, w, bias, params, needs):
    """(dx, dw, db) of the conv (x, w, bias) with `params` (stride, padding, dilation, groups, activation,
    layouts) from dy, the gradient at the conv's sum (after the activation's); None where `needs` (three
    flags) or the bias says none."""
    stride, padding, dilation, groups, _, layouts = params
    need_x, need_w, need_b = needs
    if not is_boo_backward_enabled():
        grads = torch.ops.aten.convolution_backward(
            dy, x, w, [w.shape[0]] if bias is not None else None, stride, padding, dilation, False,
            [0] * len(stride), groups, [need_x, need_w, need_b and bias is not None])
        return tuple(grads)
    dx, dw, db = _conv_backward(dy, x, w, bias is not None, stride, padding, dilation, groups, layouts,
                                [bool(need_x), bool(need_w), bool(need_b and bias is not None)])
    return dx if need_x else None, dw if need_w else None, db if need_b and bias is not None else None


if "conv" not in _CPP_AUTOGRAD:
    torch.library.register_autograd("boo::conv", _conv_backward_rule, setup_context=_conv_setup_context)


class _ConvFunction(torch.autograd.Function):
    """A direct eager conv() call that records a gradient: the forward through the call's memo, the
    backward by the op's own rule, with the context _conv_setup_context makes. Four arguments, not
    the op's nine: each costs autograd.Function.apply host time."""

    @staticmethod
    def forward(ctx, x, w, bias, call):
        ctx.save_for_backward(x, w, bias)
        ctx.params = call.params
        return call.forward(x, w, bias)

    @staticmethod
    def backward(ctx, dy):
        return (*_conv_backward_rule(ctx, dy)[:3], None)


def conv(x, w, bias=None, stride: Union[int, Sequence[int]] = 1, padding: Union[int, Sequence[int]] = 0,
         dilation: Union[int, Sequence[int]] = 1, groups: int = 1, activation: Optional[str] = None,
         shared_layout: Optional[str] = None, input_layout: Optional[str] = None,
         kernel_layout: Optional[str] = None, output_layout: Optional[str] = None, residual=None):
    """Convolution (1-D to 3-D), optionally with bias and a fused activation
    (relu, sigmoid, tanh, silu, gelu, gelu_tanh, leaky_relu[:alpha], clamp:lo:hi),
    as torch.nn.functional.conv{1,2,3}d followed by the activation.

    `residual`: a tensor of the output's shape and dtype added before the
    activation, in the conv's epilogue: act(conv(x, w) + bias + residual), as
    ResNet's relu(conv(x) + identity) (boo's --residual 1).

    Layouts follow PyTorch's memory-format rule unless given: the output is
    channels-last when the input is. `shared_layout` sets all three."""
    if residual is not None:
        return _conv_with_residual(x, w, bias, residual, stride, padding, dilation, groups, activation,
                                   shared_layout, input_layout, kernel_layout, output_layout)
    cast = _autocast("conv", [x, w, bias])
    if cast is not None:
        with torch.autocast(x.device.type, enabled=False):
            return conv(*cast, stride, padding, dilation, groups, activation, shared_layout, input_layout,
                        kernel_layout, output_layout)
    # A model calls each layer with the same arguments step after step: what the checks and the
    # layout inference below make of them is kept, keyed by everything they read (in eager mode on
    # plain tensors: a traced call may have symbolic shapes and must not touch the table), with the
    # device: the key then also fixes the forward's launchable, kept beside it for direct calls.
    plain = type(x) is torch.Tensor and type(w) is torch.Tensor and (bias is None or type(bias) is torch.Tensor)
    compiling = torch.compiler.is_compiling()
    key, memo = None, None
    if plain and not compiling:
        key = (x.shape, x.stride(), x.dtype, x.device, w.shape, w.stride(), bias is None, stride, padding, dilation,
               groups, activation, shared_layout, input_layout, kernel_layout, output_layout, conv_tf32(x.dtype))
        try:
            memo = _CONV_CALLS.get(key)
        except TypeError:  # a list among the arguments: not hashable, checked every time
            key = None
    if memo is None:
        memo = _ConvCall(_conv_call(x, w, stride, padding, dilation, groups, activation, shared_layout, input_layout,
                                    kernel_layout, output_layout))
        if key is not None and len(_CONV_CALLS) < 4096:
            _CONV_CALLS[key] = memo
    # Directly (the op's dispatch costs more host time than a small layer's kernel: the Python
    # registration's tens of microseconds, the C++ one's ~7 us more than the direct path on an H100) only
    # where nothing can tell the difference: plain tensors, no compiler tracing, nothing watching.
    if not plain or compiling or _watched():
        return _conv(x, w, bias, *memo.params)
    if torch.is_grad_enabled() and (x.requires_grad or w.requires_grad or (bias is not None and bias.requires_grad)):
        # A gradient to record: the C++ registration's autograd, else an autograd.Function with the op's rules.
        if "conv" in _CPP_AUTOGRAD:
            return _conv(x, w, bias, *memo.params)
        return _ConvFunction.apply(x, w, bias, memo)
    return memo.forward(x, w, bias)


def _conv_with_residual(x, w, bias, residual, stride, padding, dilation, groups, activation, shared_layout,
                        input_layout, kernel_layout, output_layout):
    """conv() with a residual: always through the boo::conv_residual op (its autograd: dresidual is the
    gradient at the sum, after the activation's)."""
    cast = _autocast("conv", [x, w, bias, residual])
    if cast is not None:
        x, w, bias, residual = cast
    params = _conv_call(x, w, stride, padding, dilation, groups, activation, shared_layout, input_layout,
                        kernel_layout, output_layout)
    shape = _conv_output_shape(x.shape, w.shape, params[0], params[1], params[2])
    if list(residual.shape) != shape or residual.dtype != x.dtype:
        raise ValueError(f"conv: residual of shape {list(residual.shape)} and {residual.dtype}: expected the output's "
                         f"shape {shape} and dtype {x.dtype} (it is added to the output, not broadcast)")
    return _conv_residual(x, w, bias, residual, *params)


class _ConvCall:
    """What conv() makes of one set of arguments: the op's checked non-tensor arguments (stride,
    padding, dilation, groups, activation, layouts), and once a direct call has needed it, the
    forward's launcher (False: boo declines it)."""
    __slots__ = ("params", "launcher")

    def __init__(self, params):
        self.params, self.launcher = params, None

    def forward(self, x, w, bias):
        """_conv_forward of these arguments, through the kept launcher."""
        if self.launcher is None:
            self.launcher = _conv_launcher(x, w, bias, *self.params)
        if self.launcher:
            try:
                return self.launcher(x, w, bias)
            except (ValueError, NotImplementedError, RuntimeError):
                if _capturing():
                    raise  # not compiled before the capture: the next call, warmed up, can still launch
                # Kernels that do not compile, or a failed launch: from now on this call goes the
                # general way, which reports it (one warning, or BOO_STRICT's exception) and falls back.
                self.launcher = False
        return _conv_forward(x, w, bias, *self.params)


_CONV_CALLS = {}


def _conv_launcher(x, w, bias, stride, padding, dilation, groups, activation, layouts):
    """A function running the forward launchable of this call's signature on (x, w, bias) with no
    per-call lookups, or False when boo does not take the signature (_conv_forward then decides)."""
    try:
        sig = conv_signature(tuple(x.shape), tuple(w.shape), x.dtype, tuple(stride), tuple(padding),
                             tuple(dilation), groups, bias is not None, activation, tuple(layouts.split(",")),
                             "forward")
    except (ValueError, NotImplementedError):
        return False
    launchable = get_launchable(sig)
    names = [spec.name for spec in launchable.arguments]
    if names == ["x", "w"]:
        return lambda x, w, bias: launchable(x, w)[0]
    if names == ["x", "w", "b"]:
        return lambda x, w, bias: launchable(x, w, bias)[0]
    raise AssertionError(f"{sig.func_name}: unexpected forward arguments {names}")


def _conv_call(x, w, stride, padding, dilation, groups, activation, shared_layout, input_layout, kernel_layout,
               output_layout):
    """conv()'s arguments checked and completed: the op's (stride, padding, dilation, groups, activation,
    layouts)."""
    rank = x.dim()
    if rank not in (3, 4, 5) or w.dim() != rank:
        raise ValueError(f"conv: expected input and weight of the same rank 3 to 5, got {list(x.shape)} "
                         f"and {list(w.shape)}")
    spatial = rank - 2
    stride, padding, dilation = (_tuple(v, spatial, n) for v, n in ((stride, "stride"), (padding, "padding"),
                                                                    (dilation, "dilation")))
    in_layout = _check_layout("input_layout", input_layout or shared_layout, rank) or layout_of(x)
    fil_layout = _check_layout("kernel_layout", kernel_layout or shared_layout, rank) or layout_of(w)
    out_layout = _check_layout("output_layout", output_layout or shared_layout, rank) or in_layout
    activation = activation or "none"
    _activation_fn(activation)  # validates the name before anything runs
    _boo_dtype(x.dtype, "conv")
    return stride, padding, dilation, groups, activation, ",".join((in_layout, fil_layout, out_layout))


# ---------------------------------------------------------------------------
# Layer norm.

def _layer_norm_forward(x: torch.Tensor, normalized_ndim: int, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
                eps: float) -> List[torch.Tensor]:
    """(y, mean, rstd); mean and rstd are float32 with the normalized dims kept as 1."""
    def boo():
        sig = layer_norm_signature(tuple(x.shape), normalized_ndim, x.dtype, weight is not None, bias is not None,
                                   eps, _C.LayerNormDirection.FORWARD)
        got = _run(sig, {"x": x.contiguous(), "weight": weight, "bias": bias})
        return [got["y"], got["mean"], got["rstd"]]

    def pytorch():
        y, mean, rstd = torch.native_layer_norm(x.contiguous(), x.shape[x.dim() - normalized_ndim:], weight, bias, eps)
        return [y, mean.float(), rstd.float()]

    return _boo_or_torch(lambda: f"layer_norm {list(x.shape)} {x.dtype}", boo, pytorch)


_layer_norm = _op("layer_norm", _layer_norm_forward)


@_fake("layer_norm")
def _(x, normalized_ndim, weight, bias, eps):
    stats = list(x.shape[:x.dim() - normalized_ndim]) + [1] * normalized_ndim
    return [x.new_empty(x.shape), x.new_empty(stats, dtype=torch.float32), x.new_empty(stats, dtype=torch.float32)]


def _layer_norm_backward_kernel(dy: torch.Tensor, x: torch.Tensor, normalized_ndim: int, weight: Optional[torch.Tensor],
                         has_bias: bool, mean: torch.Tensor, rstd: torch.Tensor, eps: float,
                         output_mask: List[bool]) -> List[torch.Tensor]:
    def boo():
        flags = _C.LayerNormDirection
        direction = flags(0)
        for wanted, flag in zip(output_mask, (flags.BACKWARD_DATA, flags.BACKWARD_WEIGHT, flags.BACKWARD_BIAS)):
            if wanted:
                direction |= flag
        sig = layer_norm_signature(tuple(x.shape), normalized_ndim, x.dtype, weight is not None, has_bias, eps,
                                   direction)
        return _run(sig, {"dy": dy.contiguous(), "x": x.contiguous(), "weight": weight, "mean": mean, "rstd": rstd})

    def pytorch():
        normalized = x.shape[x.dim() - normalized_ndim:]
        dx, dw, db = torch.ops.aten.native_layer_norm_backward(
            dy.contiguous(), x.contiguous(), normalized, mean, rstd, weight,
            torch.zeros(normalized, dtype=x.dtype, device=x.device) if has_bias else None,
            [bool(m) for m in output_mask])
        return {"dx": dx, "dweight": dw, "dbias": db}

    got = _boo_or_torch(lambda: f"layer_norm backward {list(x.shape)} {x.dtype}", boo, pytorch)
    # Gradients not asked for come back as distinct empty tensors (outputs may not alias).
    return [got["dx"] if output_mask[0] else x.new_empty(0), got["dweight"] if output_mask[1] else x.new_empty(0),
            got["dbias"] if output_mask[2] else x.new_empty(0)]


_layer_norm_backward = _op("layer_norm_backward", _layer_norm_backward_kernel)


@_fake("layer_norm_backward")
def _(dy, x, normalized_ndim, weight, has_bias, mean, rstd, eps, output_mask):
    params = x.shape[x.dim() - normalized_ndim:]
    return [x.new_empty(x.shape) if output_mask[0] else x.new_empty(0),
            x.new_empty(params) if output_mask[1] else x.new_empty(0),
            x.new_empty(params) if output_mask[2] else x.new_empty(0)]


def _layer_norm_setup_context(ctx, inputs, output):
    x, normalized_ndim, weight, bias, eps = inputs
    _, mean, rstd = output
    ctx.save_for_backward(x, weight, mean, rstd)
    ctx.params = (normalized_ndim, bias is not None, eps)


def _layer_norm_backward_rule(ctx, grads):
    dy = grads[0]  # mean and rstd are not differentiated through
    x, weight, mean, rstd = ctx.saved_tensors
    normalized_ndim, has_bias, eps = ctx.params
    need_x, _, need_w, need_b = ctx.needs_input_grad[:4]
    mask = [bool(need_x), bool(need_w and weight is not None), bool(need_b and has_bias)]
    if not is_boo_backward_enabled():
        grads = torch.ops.aten.native_layer_norm_backward(
            dy, x, list(x.shape[x.dim() - normalized_ndim:]), mean, rstd, weight,
            torch.zeros_like(weight) if has_bias else None, mask)
    elif not any(mask):
        grads = [None, None, None]
    else:
        grads = _layer_norm_backward(dy, x, normalized_ndim, weight, has_bias, mean, rstd, eps, mask)
    dx, dw, db = grads
    return (dx if mask[0] else None, None, dw if mask[1] else None, db if mask[2] else None, None)


_LAYER_NORM_RULES = _AutogradRules("layer_norm", _layer_norm_setup_context, _layer_norm_backward_rule)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """As torch.nn.functional.layer_norm: statistics in float32 whatever the dtype."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    if tuple(x.shape[x.dim() - len(normalized_shape):]) != normalized_shape:
        raise ValueError(f"layer_norm: normalized_shape {list(normalized_shape)} does not match the trailing "
                         f"dimensions of the input {list(x.shape)}")
    cast = _autocast("layer_norm", [x, weight, bias])
    if cast is not None:
        with torch.autocast(x.device.type, enabled=False):
            return layer_norm(cast[0], normalized_shape, cast[1], cast[2], eps)
    _boo_dtype(x.dtype, "layer_norm")
    if bias is not None and weight is None:
        raise NotImplementedError("layer_norm: a bias without a weight has no boo signature (MIOpen's -m 1 "
                                  "pairs the bias with a weight)")
    if _direct_call_allowed(x, weight, bias):
        return _norm_direct(_LAYER_NORM_RULES, _layer_norm_forward, x, len(normalized_shape), weight, bias, eps)[0]
    return _layer_norm(x, len(normalized_shape), weight, bias, eps)[0]


# ---------------------------------------------------------------------------
# RMS norm.

def _rms_torch(x, normalized_ndim, weight, eps):
    """(y, rstd) computed by PyTorch with float32 statistics (the fallback)."""
    dims = tuple(range(x.dim() - normalized_ndim, x.dim()))
    rstd = torch.rsqrt(x.float().pow(2).mean(dims, keepdim=True) + eps)
    y = x.float() * rstd
    if weight is not None:
        y = y * weight.float()
    return y.to(x.dtype), rstd.reshape(x.shape[:x.dim() - normalized_ndim] or (1,))


def _rms_norm_forward(x: torch.Tensor, normalized_ndim: int, weight: Optional[torch.Tensor], eps: float) -> List[torch.Tensor]:
    """(y, rstd); rstd is float32 with the leading dims' shape."""
    def boo():
        sig = rms_norm_signature(tuple(x.shape), normalized_ndim, x.dtype, weight is not None, eps, "forward")
        got = _run(sig, {"x": x.contiguous(), "weight": weight})
        return [got["y"], got["rstd"]]

    return _boo_or_torch(lambda: f"rms_norm {list(x.shape)} {x.dtype}", boo,
                         lambda: list(_rms_torch(x.contiguous(), normalized_ndim, weight, eps)))


_rms_norm = _op("rms_norm", _rms_norm_forward)


@_fake("rms_norm")
def _(x, normalized_ndim, weight, eps):
    return [x.new_empty(x.shape), x.new_empty(x.shape[:x.dim() - normalized_ndim] or (1,), dtype=torch.float32)]


def _rms_norm_backward_kernel(dy: torch.Tensor, x: torch.Tensor, normalized_ndim: int, weight: Optional[torch.Tensor],
                       rstd: torch.Tensor, eps: float) -> List[torch.Tensor]:
    """(dx, dweight); dweight is empty without a weight."""
    def boo():
        sig = rms_norm_signature(tuple(x.shape), normalized_ndim, x.dtype, weight is not None, eps, "backward")
        got = _run(sig, {"dy": dy.contiguous(), "x": x.contiguous(), "weight": weight, "rstd": rstd})
        return [got["dx"], got["dweight"] if weight is not None else x.new_empty(0)]

    def pytorch():
        dims = tuple(range(x.dim() - normalized_ndim, x.dim()))
        r = rstd.reshape(list(x.shape[:x.dim() - normalized_ndim]) + [1] * normalized_ndim)
        xhat = x.float() * r
        g = dy.float() * (weight.float() if weight is not None else 1.0)
        dx = r * (g - xhat * (g * xhat).mean(dims, keepdim=True))
        lead = tuple(range(x.dim() - normalized_ndim))
        dw = (dy.float() * xhat).sum(lead).to(x.dtype) if weight is not None else x.new_empty(0)
        return [dx.to(x.dtype), dw]

    return _boo_or_torch(lambda: f"rms_norm backward {list(x.shape)} {x.dtype}", boo, pytorch)


_rms_norm_backward = _op("rms_norm_backward", _rms_norm_backward_kernel)


@_fake("rms_norm_backward")
def _(dy, x, normalized_ndim, weight, rstd, eps):
    return [x.new_empty(x.shape), x.new_empty(weight.shape) if weight is not None else x.new_empty(0)]


def _rms_norm_setup_context(ctx, inputs, output):
    x, normalized_ndim, weight, eps = inputs
    ctx.save_for_backward(x, weight, output[1])
    ctx.params = (normalized_ndim, eps)


def _rms_norm_backward_rule(ctx, grads):
    dy = grads[0]  # rstd is not differentiated through
    x, weight, rstd = ctx.saved_tensors
    normalized_ndim, eps = ctx.params
    need_x, _, need_w = ctx.needs_input_grad[:3]
    if not (need_x or (need_w and weight is not None)):
        return None, None, None, None
    if is_boo_backward_enabled():
        dx, dw = _rms_norm_backward(dy, x, normalized_ndim, weight, rstd, eps)
    else:
        with torch.enable_grad():
            leaves = [t.detach().requires_grad_() for t in (x, weight) if t is not None]
            y = torch.nn.functional.rms_norm(leaves[0], x.shape[x.dim() - normalized_ndim:],
                                             leaves[1] if weight is not None else None, eps)
            grads_t = torch.autograd.grad(y, leaves, dy)
        dx, dw = grads_t[0], grads_t[1] if weight is not None else None
    return (dx if need_x else None, None, dw if need_w and weight is not None else None, None)


_RMS_NORM_RULES = _AutogradRules("rms_norm", _rms_norm_setup_context, _rms_norm_backward_rule)


def rms_norm(x, normalized_shape, weight=None, eps: Optional[float] = None):
    """As torch.nn.functional.rms_norm (eps None: the dtype's machine epsilon),
    with float32 statistics whatever the dtype."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    if tuple(x.shape[x.dim() - len(normalized_shape):]) != normalized_shape:
        raise ValueError(f"rms_norm: normalized_shape {list(normalized_shape)} does not match the trailing "
                         f"dimensions of the input {list(x.shape)}")
    cast = _autocast("rms_norm", [x, weight])
    if cast is not None:
        with torch.autocast(x.device.type, enabled=False):
            return rms_norm(cast[0], normalized_shape, cast[1], eps)
    _boo_dtype(x.dtype, "rms_norm")
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    if _direct_call_allowed(x, weight):
        return _norm_direct(_RMS_NORM_RULES, _rms_norm_forward, x, len(normalized_shape), weight, float(eps))[0]
    return _rms_norm(x, len(normalized_shape), weight, float(eps))[0]


# ---------------------------------------------------------------------------
# Batch and group norm: activations (N, C, spatial...) channels-first or channels-last.

_NORM_LAYOUTS = {3: ("NCW", "NWC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


def _norm_layout(x):
    """The layout of a batch or group norm activation (rank 3 to 5): channels-last where x is
    (PyTorch's channels_last, or C innermost), else channels-first (a tensor in neither is copied)."""
    first, last = _NORM_LAYOUTS[x.dim()]
    return first if layout_of(x) == _letters(x.dim()) else last


def _norm_strides(shape, layout):
    """Strides of `shape` (N, C, spatial...) stored in a norm layout (channels-first or -last)."""
    channels_last = layout in ("NWC", "NHWC", "NDHWC")
    order = [0] + list(range(2, len(shape))) + [1] if channels_last else list(range(len(shape)))
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return strides


def _per_channel(shape):
    """The broadcast shape of a per-channel value over an (N, C, spatial...) tensor."""
    return [1, shape[1]] + [1] * (len(shape) - 2)


def _float_or_full(t, channels, value, device):
    """`t` in float32, or `value` in every channel where there is no `t`."""
    return t.float() if t is not None else torch.full((channels,), value, dtype=torch.float32, device=device)


def _empty_f32(x):
    """An empty float32 result (outputs may not alias: a new one each time)."""
    return x.new_empty(0, dtype=torch.float32)


# ---------------------------------------------------------------------------
# Batch norm.

def _batch_norm_torch(x, weight, bias, running_mean, running_var, training, momentum, eps):
    """The op's results computed by PyTorch in float32 (the fallback)."""
    dims = [0] + list(range(2, x.dim()))
    bshape, channels = _per_channel(x.shape), x.shape[1]
    xf = x.float()
    new_mean, new_var = _empty_f32(x), _empty_f32(x)
    if training:
        mean, var = xf.mean(dims), xf.var(dims, unbiased=False)
        invstd = torch.rsqrt(var + eps)
        if running_mean is not None:
            n = x.numel() // channels
            new_mean = (1 - momentum) * running_mean.float() + momentum * mean
            new_var = (1 - momentum) * running_var.float() + momentum * var * (n / (n - 1))
        saved = (mean, invstd)
    else:
        mean, invstd = running_mean.float(), torch.rsqrt(running_var.float() + eps)
        saved = (_empty_f32(x), _empty_f32(x))
    scale = invstd * _float_or_full(weight, channels, 1.0, x.device)
    shift = _float_or_full(bias, channels, 0.0, x.device) - mean * scale
    y = (xf * scale.view(bshape) + shift.view(bshape)).to(x.dtype)
    return [_restride(y, _norm_strides(list(x.shape), _norm_layout(x))), *saved, new_mean, new_var]


def _check_batch_norm_statistics(training, running_mean, running_var):
    """The running statistics every entry of the op takes (boo.ops.batch_norm, torch.ops.boo.batch_norm's
    kernels and fake implementation): both or neither, and both in inference, which normalizes by them."""
    if (running_mean is None) != (running_var is None):
        raise ValueError("batch_norm: give running_mean and running_var together, or neither")
    if not training and running_mean is None:
        raise ValueError("batch_norm: inference (training=False) normalizes by running_mean and running_var; "
                         "give them, or training=True for the batch statistics")


def _batch_norm_forward(x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
                        running_mean: Optional[torch.Tensor], running_var: Optional[torch.Tensor], training: bool,
                        momentum: float, eps: float) -> List[torch.Tensor]:
    """(y, saved mean, saved inverse std, new running mean, new running variance) of a 4-D or 5-D x; the
    statistics are float32 [C], empty where the pass has none (inference saves nothing; the running
    statistics are computed only in training with running statistics given, not written to them)."""
    def boo():
        channels, bshape = x.shape[1], _per_channel(x.shape)
        running = running_mean is not None
        if training:
            sig = batch_norm_signature(tuple(x.shape), x.dtype, _norm_layout(x), "training", running, eps,
                                       momentum if running else 1.0)
        else:
            sig = batch_norm_signature(tuple(x.shape), x.dtype, _norm_layout(x), "inference", True, eps)
        by_name = {"x": x, "scale": _float_or_full(weight, channels, 1.0, x.device).view(bshape),
                   "bias": _float_or_full(bias, channels, 0.0, x.device).view(bshape)}
        if running:
            stats = (running_mean.float().view(bshape), running_var.float().view(bshape))
            by_name.update(zip(("running_mean_in", "running_variance_in") if training
                               else ("estimated_mean", "estimated_variance"), stats))
        got = _run(sig, by_name)
        per_channel = [got[name].view(channels) if name in got else _empty_f32(x)
                       for name in ("saved_mean", "saved_inv_variance", "running_mean", "running_variance")]
        return [got["y"], *per_channel]

    _check_batch_norm_statistics(training, running_mean, running_var)
    return _boo_or_torch(lambda: f"batch_norm {list(x.shape)} {x.dtype}", boo,
                         lambda: _batch_norm_torch(x, weight, bias, running_mean, running_var, training, momentum,
                                                   eps))


_batch_norm = _op("batch_norm", _batch_norm_forward)


@_fake("batch_norm")
def _(x, weight, bias, running_mean, running_var, training, momentum, eps):
    def stat(present):
        return x.new_empty(x.shape[1] if present else 0, dtype=torch.float32)

    _check_batch_norm_statistics(training, running_mean, running_var)
    y = x.new_empty_strided(x.shape, _norm_strides(list(x.shape), _norm_layout(x)))
    running = training and running_mean is not None
    return [y, stat(training), stat(training), stat(running), stat(running)]


def _batch_norm_backward_torch(dy, x, weight, mean, invstd, training, output_mask):
    """(dx, dweight, dbias) by PyTorch in float32: through the batch statistics in training, through
    fixed (running) statistics in inference."""
    dims = [0] + list(range(2, x.dim()))
    bshape, channels = _per_channel(x.shape), x.shape[1]
    g = dy.float()
    xhat = (x.float() - mean.view(bshape)) * invstd.view(bshape)
    dbias = g.sum(dims)
    dweight = (g * xhat).sum(dims)
    scale = (invstd * _float_or_full(weight, channels, 1.0, x.device)).view(bshape)
    if training:
        n = x.numel() // channels
        dx = scale * (g - (dbias / n).view(bshape) - xhat * (dweight / n).view(bshape))
    else:
        dx = scale * g
    dx = _restride(dx.to(x.dtype), _norm_strides(list(x.shape), _norm_layout(x)))
    return [dx if output_mask[0] else x.new_empty(0), dweight if output_mask[1] else _empty_f32(x),
            dbias if output_mask[2] else _empty_f32(x)]


def _batch_norm_backward_kernel(dy: torch.Tensor, x: torch.Tensor, weight: Optional[torch.Tensor], save_mean: torch.Tensor,
                         save_invstd: torch.Tensor, eps: float, output_mask: List[bool]) -> List[torch.Tensor]:
    """The training backward through boo's kernel: (dx, dweight, dbias), dweight and dbias float32 [C];
    those not in output_mask come back empty (the kernel computes all three)."""
    def boo():
        channels, bshape = x.shape[1], _per_channel(x.shape)
        sig = batch_norm_signature(tuple(x.shape), x.dtype, _norm_layout(x), "backward", False, eps)
        got = _run(sig, {"x": x, "dy": dy, "scale": _float_or_full(weight, channels, 1.0, x.device).view(bshape),
                         "saved_mean": save_mean.view(bshape), "saved_inv_variance": save_invstd.view(bshape)})
        return [got["dx"] if output_mask[0] else x.new_empty(0),
                got["dscale"].view(channels) if output_mask[1] else _empty_f32(x),
                got["dbias"].view(channels) if output_mask[2] else _empty_f32(x)]

    return _boo_or_torch(lambda: f"batch_norm backward {list(x.shape)} {x.dtype}", boo,
                         lambda: _batch_norm_backward_torch(dy, x, weight, save_mean, save_invstd, True, output_mask))


_batch_norm_backward = _op("batch_norm_backward", _batch_norm_backward_kernel)


@_fake("batch_norm_backward")
def _(dy, x, weight, save_mean, save_invstd, eps, output_mask):
    channels = x.shape[1]
    return [x.new_empty_strided(x.shape, _norm_strides(list(x.shape), _norm_layout(x))) if output_mask[0]
            else x.new_empty(0),
            x.new_empty(channels if output_mask[1] else 0, dtype=torch.float32),
            x.new_empty(channels if output_mask[2] else 0, dtype=torch.float32)]


def _batch_norm_setup_context(ctx, inputs, output):
    x, weight, bias, running_mean, running_var, training, momentum, eps = inputs
    if training:
        ctx.save_for_backward(x, weight, output[1], output[2])
    else:
        # Inference reads the running statistics, which a training step would overwrite: saved as
        # tensors, autograd's version counter catches that.
        ctx.save_for_backward(x, weight, running_mean, running_var)
    ctx.params = (training, None if bias is None else bias.dtype, eps)


def _batch_norm_backward_rule(ctx, grads):
    dy = grads[0]  # the statistics are not differentiated through
    x, weight, a, b = ctx.saved_tensors
    training, bias_dtype, eps = ctx.params
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    mask = [bool(need_x), bool(need_w and weight is not None), bool(need_b and bias_dtype is not None)]
    if not any(mask):
        return (None,) * 8
    if training and is_boo_backward_enabled():
        dx, dw, db = _batch_norm_backward(dy, x, weight, a, b, eps, mask)
    elif training:
        dx, dw, db = _batch_norm_backward_torch(dy, x, weight, a, b, True, mask)
    else:
        # boo's backward kernels (MIOpen's) are the training one's: with fixed statistics dx is
        # dy * weight * invstd, PyTorch's elementwise ops.
        dx, dw, db = _batch_norm_backward_torch(dy, x, weight, a.float(), torch.rsqrt(b.float() + eps), False, mask)
    return (dx if mask[0] else None, dw.to(weight.dtype) if mask[1] else None,
            db.to(bias_dtype) if mask[2] else None, None, None, None, None, None)


_BATCH_NORM_RULES = _AutogradRules("batch_norm", _batch_norm_setup_context, _batch_norm_backward_rule)


def _as_rank(x, low, high):
    """x (N, C, spatial...) as a tensor of rank `low` to `high` for boo's signatures: size-1 dims
    inserted after C (a view: a channels-last x stays channels-last), or the trailing spatial dims
    flattened into one (a copy where they are not contiguous)."""
    if x.dim() < low:
        return x.reshape(list(x.shape[:2]) + [1] * (low - x.dim()) + list(x.shape[2:]))
    if x.dim() > high:
        return x.reshape(list(x.shape[:high - 1]) + [-1])
    return x


def batch_norm(x, weight=None, bias=None, running_mean=None, running_var=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):
    """As torch.nn.functional.batch_norm (note the order: weight and bias before the running
    statistics): statistics per channel of an (N, C, ...) input, channels-first or channels_last. In
    training the batch statistics normalize, and running_mean and running_var (when given) are updated
    in place: r = (1 - momentum) * r + momentum * batch, the variance unbiased. Otherwise the running
    statistics normalize. float16/bfloat16 data takes float32 (PyTorch's mixed batch norm) or 16-bit
    parameters; the statistics are float32. Each momentum is its own signature (kernels are shared)."""
    if x.dim() < 2:
        raise ValueError(f"batch_norm: expected an (N, C, ...) input, got shape {list(x.shape)}")
    _boo_dtype(x.dtype, "batch_norm")
    _check_batch_norm_statistics(training, running_mean, running_var)
    channels = x.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != channels:
            raise ValueError(f"batch_norm: {name} has {t.numel()} elements for {channels} channels")
    if training and x.numel() // max(channels, 1) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(x.shape)}")
    xb = _as_rank(x, 4, 5)
    args = (xb, weight, bias, running_mean, running_var, bool(training), float(momentum), float(eps))
    # Directly in Python only where the op's dispatch would reach Python anyway: the C++ registration's
    # kernel and autograd cost less than the Python path's signature lookup and per-channel views.
    if "batch_norm" not in _CPP_AUTOGRAD and _direct_call_allowed(xb, weight, bias, running_mean, running_var):
        out = _norm_direct(_BATCH_NORM_RULES, _batch_norm_forward, *args)
    else:
        out = _batch_norm(*args)
    if training and running_mean is not None:
        with torch.no_grad():
            running_mean.copy_(out[3].view(running_mean.shape))
            running_var.copy_(out[4].view(running_var.shape))
    return out[0] if xb is x else out[0].reshape(x.shape)


# ---------------------------------------------------------------------------
# Group norm.

def _group_norm_torch(x, groups, weight, bias, eps):
    """(y, mean, rstd) computed by PyTorch in float32 (the fallback)."""
    n, channels = x.shape[:2]
    xf = x.float().reshape(n, groups, -1)
    mean, var = xf.mean(-1), xf.var(-1, unbiased=False)
    rstd = torch.rsqrt(var + eps)
    xhat = ((xf - mean.unsqueeze(-1)) * rstd.unsqueeze(-1)).reshape(x.shape)
    bshape = _per_channel(x.shape)
    y = xhat * _float_or_full(weight, channels, 1.0, x.device).view(bshape) \
        + _float_or_full(bias, channels, 0.0, x.device).view(bshape)
    return [_restride(y.to(x.dtype), _norm_strides(list(x.shape), _norm_layout(x))), mean, rstd]


def _group_norm_params(x, weight, bias):
    """(weight, bias) in x's dtype for an affine signature (the one missing: 1 or 0), or (None, None)."""
    if weight is None and bias is None:
        return None, None
    channels = x.shape[1]
    w = weight.to(x.dtype) if weight is not None else torch.ones(channels, dtype=x.dtype, device=x.device)
    b = bias.to(x.dtype) if bias is not None else torch.zeros(channels, dtype=x.dtype, device=x.device)
    return w, b


def _group_norm_forward(x: torch.Tensor, num_groups: int, weight: Optional[torch.Tensor],
                        bias: Optional[torch.Tensor], eps: float) -> List[torch.Tensor]:
    """(y, mean, rstd) of a 3-D to 5-D x; mean and rstd are float32 [N, num_groups]."""
    def boo():
        w, b = _group_norm_params(x, weight, bias)
        sig = group_norm_signature(tuple(x.shape), x.dtype, num_groups, w is not None, eps, _norm_layout(x),
                                   "forward")
        got = _run(sig, {"x": x, "weight": w, "bias": b})
        return [got["y"], got["mean"], got["rstd"]]

    return _boo_or_torch(lambda: f"group_norm {list(x.shape)} {x.dtype}", boo,
                         lambda: _group_norm_torch(x, num_groups, weight, bias, eps))


_group_norm = _op("group_norm", _group_norm_forward)


@_fake("group_norm")
def _(x, num_groups, weight, bias, eps):
    stats = (x.shape[0], num_groups)
    return [x.new_empty_strided(x.shape, _norm_strides(list(x.shape), _norm_layout(x))),
            x.new_empty(stats, dtype=torch.float32), x.new_empty(stats, dtype=torch.float32)]


def _group_norm_backward_torch(dy, x, groups, weight, mean, rstd):
    """(dx, dweight, dbias) by PyTorch in float32; dweight and dbias float32 [C]."""
    n, channels = x.shape[:2]
    bshape = _per_channel(x.shape)
    dims = [0] + list(range(2, x.dim()))
    xf = x.float().reshape(n, groups, -1)
    xhat = ((xf - mean.unsqueeze(-1)) * rstd.unsqueeze(-1)).reshape(x.shape)
    gy = dy.float()
    g = (gy * _float_or_full(weight, channels, 1.0, x.device).view(bshape)).reshape(n, groups, -1)
    xh = xhat.reshape(n, groups, -1)
    dx = rstd.unsqueeze(-1) * (g - g.mean(-1, keepdim=True) - xh * (g * xh).mean(-1, keepdim=True))
    dx = _restride(dx.reshape(x.shape).to(x.dtype), _norm_strides(list(x.shape), _norm_layout(x)))
    return [dx, (gy * xhat).sum(dims), gy.sum(dims)]


def _group_norm_backward_kernel(dy: torch.Tensor, x: torch.Tensor, num_groups: int, weight: Optional[torch.Tensor],
                         affine: bool, mean: torch.Tensor, rstd: torch.Tensor, eps: float,
                         output_mask: List[bool]) -> List[torch.Tensor]:
    """(dx, dweight, dbias) through boo's kernel (one computes all that the mode has: dx, and with
    `affine` dweight and dbias, in x's dtype); those not in output_mask come back empty."""
    def boo():
        sig = group_norm_signature(tuple(x.shape), x.dtype, num_groups, affine, eps, _norm_layout(x), "backward")
        w = None
        if affine:
            w = weight.to(x.dtype) if weight is not None else torch.ones(x.shape[1], dtype=x.dtype, device=x.device)
        got = _run(sig, {"dy": dy, "x": x, "weight": w, "mean": mean, "rstd": rstd})
        return [got["dx"], got.get("dweight"), got.get("dbias")]

    got = _boo_or_torch(lambda: f"group_norm backward {list(x.shape)} {x.dtype}", boo,
                        lambda: _group_norm_backward_torch(dy, x, num_groups, weight, mean, rstd))
    return [got[0] if output_mask[0] else x.new_empty(0), got[1] if output_mask[1] else x.new_empty(0),
            got[2] if output_mask[2] else x.new_empty(0)]


_group_norm_backward = _op("group_norm_backward", _group_norm_backward_kernel)


@_fake("group_norm_backward")
def _(dy, x, num_groups, weight, affine, mean, rstd, eps, output_mask):
    channels = x.shape[1]
    return [x.new_empty_strided(x.shape, _norm_strides(list(x.shape), _norm_layout(x))) if output_mask[0]
            else x.new_empty(0),
            x.new_empty(channels) if output_mask[1] else x.new_empty(0),
            x.new_empty(channels) if output_mask[2] else x.new_empty(0)]


def _group_norm_setup_context(ctx, inputs, output):
    x, num_groups, weight, bias, eps = inputs
    ctx.save_for_backward(x, weight, output[1], output[2])
    ctx.params = (num_groups, None if bias is None else bias.dtype, eps)


def _group_norm_backward_rule(ctx, grads):
    dy = grads[0]  # mean and rstd are not differentiated through
    x, weight, mean, rstd = ctx.saved_tensors
    num_groups, bias_dtype, eps = ctx.params
    need_x, _, need_w, need_b = ctx.needs_input_grad[:4]
    mask = [bool(need_x), bool(need_w and weight is not None), bool(need_b and bias_dtype is not None)]
    if not any(mask):
        return (None,) * 5
    if is_boo_backward_enabled():
        dx, dw, db = _group_norm_backward(dy, x, num_groups, weight, weight is not None or bias_dtype is not None,
                                          mean, rstd, eps, mask)
    else:
        dx, dw, db = _group_norm_backward_torch(dy, x, num_groups, weight, mean, rstd)
    return (dx if mask[0] else None, None, dw.to(weight.dtype) if mask[1] else None,
            db.to(bias_dtype) if mask[2] else None, None)


_GROUP_NORM_RULES = _AutogradRules("group_norm", _group_norm_setup_context, _group_norm_backward_rule)


def group_norm(x, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """As torch.nn.functional.group_norm: statistics per sample over each of num_groups groups of
    channels, float32 whatever the dtype; channels-first or channels_last input. weight and bias run
    in x's dtype (16-bit data with float32 parameters casts them)."""
    if x.dim() < 2:
        raise ValueError(f"group_norm: expected an (N, C, ...) input, got shape {list(x.shape)}")
    channels = x.shape[1]
    if num_groups < 1 or channels % num_groups:
        raise ValueError(f"group_norm: num_groups {num_groups} must be positive and divide the {channels} channels")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise ValueError(f"group_norm: {name} has {t.numel()} elements for {channels} channels")
    cast = _autocast("group_norm", [x, weight, bias])
    if cast is not None:
        with torch.autocast(x.device.type, enabled=False):
            return group_norm(cast[0], num_groups, cast[1], cast[2], eps)
    _boo_dtype(x.dtype, "group_norm")
    xg = _as_rank(x, 3, 5)
    args = (xg, int(num_groups), weight, bias, float(eps))
    if _direct_call_allowed(xg, weight, bias):
        y = _norm_direct(_GROUP_NORM_RULES, _group_norm_forward, *args)[0]
    else:
        y = _group_norm(*args)[0]
    return y if xg is x else y.reshape(x.shape)


# ---------------------------------------------------------------------------
# Matrix products: boo's GEMM op (MIOpenDriver's gemm, the conv tiers' mainloops as the identity face).

_GEMM_TOKENS = {torch.float32: "gemm", torch.float16: "gemmfp16", torch.bfloat16: "gemmbfp16"}


def _gemm_operand(t):
    """(t, False) when its (batch, rows, cols) are stored row-major, (t^T, True) when its transpose is
    (a transposed view: the GEMM's trans flag, no copy), else (a contiguous copy, False)."""
    if t.is_contiguous():
        return t, False
    if t.transpose(-1, -2).is_contiguous():
        return t.transpose(-1, -2), True
    return t.contiguous(), False


def matmul_signature(batch, m, k, n, dtype, trans_a=False, trans_b=False):
    """The GEMM signature of `batch` products [m, k] @ [k, n] (MIOpenDriver's gemm line); trans_a: a stored
    k x m, trans_b: b stored n x k. A float32 product runs on TF32 tensor cores (--fp32-math tf32) where
    torch.backends.cuda.matmul.allow_tf32 is set, as PyTorch's own do (its default: off)."""
    if dtype not in _GEMM_TOKENS:
        raise NotImplementedError(f"boo's GEMM computes in float32, float16 and bfloat16, not {dtype}")
    tf32 = " --fp32-math tf32" if dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32 else ""
    return _C.Signature.from_command(f"{_GEMM_TOKENS[dtype]} --a_w {m} --a_h {k} --b_w {n} --transA {int(trans_a)} "
                                     f"--transB {int(trans_b)} --batch_count {batch}{tf32}")


def _matmul_forward(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a [..., M, K] @ b [..., K, N] (the same leading dims) on boo's GEMM."""
    def boo():
        lead, (m, k), n = list(a.shape[:-2]), a.shape[-2:], b.shape[-1]
        batch = math.prod(lead)
        a3, trans_a = _gemm_operand(a.reshape(batch, m, k))
        b3, trans_b = _gemm_operand(b.reshape(batch, k, n))
        launchable = get_launchable(matmul_signature(batch, m, k, n, a.dtype, trans_a, trans_b))
        # The signature's a and b: [batch,] stored rows x cols (a batch of one has no batch dim).
        spec_a, spec_b = launchable.arguments
        d = launchable(a3.reshape(spec_a.shape), b3.reshape(spec_b.shape))[0]
        return d.reshape(lead + [m, n])

    return _boo_or_torch(lambda: f"matmul {list(a.shape)} @ {list(b.shape)} {a.dtype}", boo,
                         lambda: torch.matmul(a, b))


_matmul = _op("matmul", _matmul_forward)


@_fake("matmul")
def _(a, b):
    return a.new_empty(list(a.shape[:-1]) + [b.shape[-1]])


def _matmul_setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _matmul_backward_rule(ctx, dd):
    """da = dd b^T and db = a^T dd, each a boo GEMM of transposed views (PyTorch's with backward off)."""
    a, b = ctx.saved_tensors
    product = _matmul if is_boo_backward_enabled() else torch.matmul
    da = product(dd, b.transpose(-1, -2)) if ctx.needs_input_grad[0] else None
    db = product(a.transpose(-1, -2), dd) if ctx.needs_input_grad[1] else None
    return da, db


if "matmul" not in _CPP_AUTOGRAD:
    torch.library.register_autograd("boo::matmul", _matmul_backward_rule, setup_context=_matmul_setup_context)


def matmul(a, b):
    """a @ b as torch.matmul for operands of at least 2 dims with the same leading (batch) dims, in float32
    (full precision, or TF32 where torch.backends.cuda.matmul.allow_tf32 is set), float16 or bfloat16; a
    transposed operand (a .t() or .mT view) is read in place.
    Autograd's products are boo GEMMs too (disable_backward(): PyTorch's)."""
    if a.dim() < 2 or b.dim() < 2:
        raise ValueError(f"matmul: operands of at least 2 dims, got {list(a.shape)} and {list(b.shape)}")
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"matmul: the leading (batch) dims differ: {list(a.shape[:-2])} and {list(b.shape[:-2])} "
                         "(boo does not broadcast them)")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: {list(a.shape)} @ {list(b.shape)}: a's last dim must be b's second last")
    if a.dtype != b.dtype:
        raise ValueError(f"matmul: operands of one dtype, got {a.dtype} and {b.dtype}")
    if torch.is_autocast_enabled(a.device.type):
        target = torch.get_autocast_dtype(a.device.type)
        if a.dtype == torch.float32 and target in _GEMM_TOKENS:
            with torch.autocast(a.device.type, enabled=False):
                return matmul(a.to(target), b.to(target))
    _boo_dtype(a.dtype, "matmul")
    return _matmul(a, b)


def linear(x, weight, bias=None):
    """As torch.nn.functional.linear: x [..., in] @ weight [out, in]^T (+ bias [out]), the product a boo
    GEMM (weight read in place, transposed), with autograd."""
    if weight.dim() != 2 or x.dim() < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: x {list(x.shape)} and weight {list(weight.shape)}: weight is [out, in] with in "
                         "x's last dim")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise ValueError(f"linear: bias {list(bias.shape)} must be [{weight.shape[0]}]")
    rows = x.reshape(-1, x.shape[-1])
    y = matmul(rows, weight.t())
    if bias is not None:
        y = y + bias.to(y.dtype)
    return y.reshape(list(x.shape[:-1]) + [weight.shape[0]])
