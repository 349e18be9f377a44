"""torch.compile backends: "boo" (boo's ops, the rest eager) and
"boo_inductor" (boo's ops, the rest through inductor), also registered under
iree-turbine BOO's names: "iree_boo" is "boo", "iree_boo_inductor" is
"boo_inductor", and "iree_boo_experimental" is "boo_inductor" too: boo has no
experimental fusions (BOO's experimental backend adds the conv backward, which
boo's rewrite always takes, its ops carrying their own autograd).

The rewrite works on Dynamo's FX graph before autograd: every convolution
(with its bias, the residual add of a tensor of its output's shape right after
it, as ResNet's relu(conv(x) + identity), and a supported activation after
those: all in the conv's epilogue), every layer norm, RMS norm, batch norm
(training, updating the running statistics, and inference) and group norm
becomes a boo op. In an inference graph (nothing needs a
gradient) a batch norm in eval mode right after a convolution is folded into
it, as inductor's freezing does: the conv's weight and bias scaled and shifted
per output channel (in float32, then cast to the weight's dtype) by a small
elementwise op on the parameters, and the activation after the batch norm
fused into the conv (with a residual add between them, the add too). The norms' kernels have no fused
activation otherwise: a ReLU or SiLU after a batch or group norm stays PyTorch's. boo's ops carry their own
autograd (a fused residual's gradient is the one at the sum), so the backward graph
runs boo's backward kernels too. Each candidate is checked when the graph is
compiled (on a GPU its kernels are compiled or loaded then): one boo cannot
run stays with PyTorch, with one warning — never an error at run time.

On a GPU the kernels of every candidate (forward and backward) are compiled
first, in parallel (BOO_COMPILE_JOBS threads, default the CPUs this process
may use; 0 or 1: none ahead, each compiled as its candidate is checked), so
the first compiled step waits for the slowest compile, not for their sum.
"""
import functools
import logging
import math
import operator
import os
import time
import warnings

import torch
import torch.nn.functional as F

from . import _C, ops

__all__ = ["backend", "boo_backend", "boo_inductor_backend", "iree_boo_backend", "iree_boo_inductor_backend",
           "iree_boo_experimental_backend", "DEFAULT_FUSION_SCHEMA", "INDUCTOR_FUSION_DEFAULTS"]

log = logging.getLogger("boo")

# What the rewrite carves out: convolutions and the norms, and per op what it
# fuses (BOO's OpFusionSpec: the producers and consumers an op absorbs). A conv
# absorbs, in this order after it: an eval-mode batch norm in inference graphs
# (folded into its weight and bias: "conv_batch_norm"), an add of a tensor of
# its output's shape, dtype and device ("conv_residual": y = conv + bias + z in
# the epilogue, z's gradient the sum's), then one of the activations named in
# "conv_activations" (boo's names). The norms absorb nothing. Matrix products (torch.matmul, mm, bmm,
# the @ operator, F.linear: "matmul") are off until boo's GEMM is faster than cuBLAS on the lists
# measured (docs/perf/).
DEFAULT_FUSION_SCHEMA = {
    "conv": True,
    "conv_activations": ("relu", "sigmoid", "tanh", "silu", "gelu", "gelu_tanh", "leaky_relu", "clamp"),
    "conv_batch_norm": True,
    "conv_residual": True,
    "layer_norm": True,
    "rms_norm": True,
    "batch_norm": True,
    "group_norm": True,
    "matmul": False,
}

# What "boo_inductor" changes in DEFAULT_FUSION_SCHEMA: batch norms stay in the graph for inductor,
# which folds their statistics and normalization into the reductions and pointwise kernels around
# them (with the ReLU and residual add that follow), where boo's batch norm is passes of its own over
# the tensor (ResNet-50 training at batch 128 on an H100: boo's batch-norm kernels 8.7 ms of a 27.1 ms
# step). Inference graphs still fold each batch norm after a conv into the conv (conv_batch_norm).
INDUCTOR_FUSION_DEFAULTS = {"batch_norm": False}

_CONVS = {torch.conv1d: 1, torch.conv2d: 2, torch.conv3d: 3, F.conv1d: 1, F.conv2d: 2, F.conv3d: 3}
_LAYER_NORMS = (F.layer_norm, torch.layer_norm)
_RMS_NORMS = (F.rms_norm, torch.rms_norm)
# Each call's argument names and defaults: F.batch_norm takes the running statistics before the
# parameters, torch.batch_norm (and boo.ops.batch_norm) after.
_BATCH_NORMS = {
    F.batch_norm: (("input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"),
                   (None, None, None, None, None, False, 0.1, 1e-5)),
    torch.batch_norm: (("input", "weight", "bias", "running_mean", "running_var", "training", "momentum", "eps"),
                       (None,) * 8),
}
_GROUP_NORMS = (F.group_norm, torch.group_norm)


def _activation_of(node):
    """boo's activation name for an FX node that applies one to its first
    argument (and nothing else), or None."""
    target, args, kwargs = node.target, node.args, node.kwargs
    if node.op == "call_method":
        return {"relu": "relu", "relu_": "relu", "sigmoid": "sigmoid", "tanh": "tanh"}.get(target) \
            if len(args) == 1 and not kwargs else None
    if node.op != "call_function":
        return None
    if target in (F.relu, torch.relu, torch.relu_) and len(args) == 1:
        return "relu"
    if target in (torch.sigmoid, F.sigmoid) and len(args) == 1 and not kwargs:
        return "sigmoid"
    if target in (torch.tanh, F.tanh) and len(args) == 1 and not kwargs:
        return "tanh"
    if target in (F.silu, torch._C._nn.silu) and len(args) == 1:
        return "silu"
    if target in (F.gelu, torch._C._nn.gelu) and len(args) == 1:
        approximate = kwargs.get("approximate", "none")
        return {"none": "gelu", "tanh": "gelu_tanh"}.get(approximate)
    if target in (F.leaky_relu, torch._C._nn.leaky_relu):
        slope = args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01)
        return f"leaky_relu:{float(slope)!r}" if isinstance(slope, (int, float)) else None
    if target is torch.clamp:
        lo = args[1] if len(args) > 1 else kwargs.get("min")
        hi = args[2] if len(args) > 2 else kwargs.get("max")
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
            return f"clamp:{float(lo)!r}:{float(hi)!r}"
    return None


def _value(node):
    return node.meta.get("example_value") if isinstance(node, torch.fx.Node) else node


def _call_arguments(node, names, defaults):
    """The values of a call node's arguments `names`, positional or keyword,
    with `defaults` for those not given."""
    return [node.args[i] if i < len(node.args) else node.kwargs.get(n, d)
            for i, (n, d) in enumerate(zip(names, defaults))]


def _conv_arguments(node):
    """(x, w, b, stride, padding, dilation, groups) of a conv node with
    numeric padding, or None."""
    values = _call_arguments(node, ("input", "weight", "bias", "stride", "padding", "dilation", "groups"),
                             (None, None, None, 1, 0, 1, 1))
    if values[4] == "valid":
        values[4] = 0
    if isinstance(values[4], str):
        return None  # 'same': torch.nn pads asymmetrically for even kernels; left to PyTorch
    return values


def _replace(graph, node, op, args):
    """Puts a call of `op` on `args` where `node` was."""
    with graph.inserting_after(node):
        new = graph.call_function(op, args)
    new.meta.update(node.meta)
    node.replace_all_uses_with(new)
    graph.erase_node(node)


def _symbolic(tensors):
    return any(isinstance(d, torch.SymInt) for t in tensors for d in t.shape)


def _boo_can_run(sig_of, tensors, warm_only=None):
    """Whether boo runs the signatures `sig_of()` builds on the tensors' device
    (on a GPU: compiles or loads their kernels now, unless _warm_up did); warns
    once otherwise. With symbolic shapes (dynamic=True) there is nothing to
    check yet: the op checks at run time and falls back to PyTorch there
    (boo.ops). `warm_only()`: signatures the op may launch too, which _warm_up
    compiles ahead and this does not check."""
    if _symbolic(tensors):
        return tensors[0].device.type in ("cuda", "cpu")
    try:
        sigs = sig_of()
        device = tensors[0].device
        if device.type == "cuda":
            for sig in sigs:
                _C.implementation(sig, device.index or 0)
        elif device.type != "cpu":
            return False
        return True
    except (ValueError, NotImplementedError, RuntimeError) as e:
        _warn_once(str(e))
        return False


@functools.lru_cache(maxsize=None)
def _warn_once(message):
    warnings.warn(f"boo: left to PyTorch: {message}", stacklevel=3)


def _inference_batch_norm_after(conv, node):
    """(weight, bias, running_mean, running_var, eps) of `node` when it is an eval-mode batch norm of
    the conv node `conv`'s output in a graph that needs no gradient through it (the fold is for
    inference: autograd would see the folded parameters, not the batch norm's), else None."""
    if node.op != "call_function" or node.target not in _BATCH_NORMS:
        return None
    values = dict(zip(_BATCH_NORMS[node.target][0], _call_arguments(node, *_BATCH_NORMS[node.target])))
    w, b, rm, rv, eps = (values[k] for k in ("weight", "bias", "running_mean", "running_var", "eps"))
    out = _value(node)
    if values["input"] is not conv or values["training"] is not False or not isinstance(eps, (int, float)) \
            or not isinstance(out, torch.Tensor) or out.requires_grad:
        return None
    if not all(isinstance(_value(t), torch.Tensor) for t in (rm, rv)) \
            or not all(t is None or isinstance(_value(t), torch.Tensor) for t in (w, b)):
        return None
    return w, b, rm, rv, float(eps)


def _fold_batch_norm(w, b, gamma, beta, mean, var, eps):
    """(w', b'): the conv weight `w` and bias `b` (or None) with the inference batch norm after it
    folded in: w' = w * s per output channel, b' = beta + (b - mean) * s, s = gamma * rsqrt(var + eps);
    computed in float32 and cast to w's dtype (under autocast the conv then casts them as it would w).
    Traced into the compiled graph: one small elementwise op on the parameters per call (constant
    folded where the backend freezes parameters)."""
    scale = torch.rsqrt(var.float() + eps)
    if gamma is not None:
        scale = scale * gamma.float()
    shift = -mean.float() if b is None else b.float() - mean.float()
    bias = shift * scale if beta is None else shift * scale + beta.float()
    weight = w.float() * scale.reshape([-1] + [1] * (w.dim() - 1))
    return weight.to(w.dtype), bias.to(w.dtype)


# The adds a residual may be: z + y either way round; in place only on y (the conv's own output,
# used by nothing else), never on z, which others may still read.
_ADDS = (operator.add, torch.add, torch.Tensor.add)
_IN_PLACE_ADDS = (operator.iadd, torch.Tensor.add_)


def _residual_add_of(node, src):
    """(node, z) when `node` adds z to the output of `src` (a conv or its folded batch norm) and nothing
    else: z a tensor of that output's shape, dtype and device (no broadcast, no type promotion), alpha 1;
    else None."""
    if node.op == "call_method":
        target = getattr(torch.Tensor, node.target, None) if node.target in ("add", "add_") else None
    elif node.op == "call_function":
        target = node.target
    else:
        return None
    if target not in _ADDS + _IN_PLACE_ADDS or len(node.args) != 2 or \
            any(k != "alpha" for k in node.kwargs) or node.kwargs.get("alpha", 1) != 1:
        return None
    a, b = node.args
    if (a is src) == (b is src) or (target in _IN_PLACE_ADDS and a is not src):
        return None
    z = b if a is src else a
    zv, yv, out = _value(z), _value(src), _value(node)
    if not all(isinstance(t, torch.Tensor) for t in (zv, yv, out)):
        return None
    if zv.shape != yv.shape or out.shape != yv.shape or not zv.dtype == yv.dtype == out.dtype \
            or zv.device != yv.device:
        return None
    return node, z


def _rewrite_convs(graph, schema, check):
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _CONVS:
            continue
        arguments = _conv_arguments(node)
        if arguments is None:
            continue
        x, w, b, stride, padding, dilation, groups = arguments
        xv, wv, bv = _value(x), _value(w), _value(b)
        if not isinstance(xv, torch.Tensor) or not isinstance(wv, torch.Tensor):
            continue
        spatial = _CONVS[node.target]
        stride, padding, dilation = (ops._tuple(v, spatial, n) for v, n in ((stride, "stride"),
                                                                           (padding, "padding"),
                                                                           (dilation, "dilation")))
        # An inference batch norm as the conv's single user is folded into its weight and bias; a single
        # activation user (of the batch norm, when folded) is fused. Both nodes then go away.
        users = list(node.users)
        bn, bn_parameters = None, None
        if schema["conv_batch_norm"] and len(users) == 1:
            bn_parameters = _inference_batch_norm_after(node, users[0])
            if bn_parameters is not None:
                bn = users[0]
                users = list(bn.users)
        # A residual add as the single user (of the batch norm, when folded) goes into the epilogue.
        add, residual = None, None
        if schema["conv_residual"] and len(users) == 1:
            found = _residual_add_of(users[0], bn or node)
            if found is not None:
                add, residual = found
                users = list(add.users)
        activation, fused = "none", None
        if len(users) == 1:
            name = _activation_of(users[0])
            if name and name.split(":")[0] in schema["conv_activations"]:
                activation, fused = name, users[0]
        layouts = (ops.layout_of(xv), ops.layout_of(wv), ops.layout_of(xv))
        # The backward's kernels are checked only where the graph records a gradient through the conv
        # (under no_grad the parameters still require one, the conv's output does not).
        out = _value(node)
        needs_grad = out.requires_grad if isinstance(out, torch.Tensor) else \
            any(t is not None and t.requires_grad for t in (xv, wv, bv))
        has_bias = bv is not None or bn is not None
        shape = (tuple(xv.shape), tuple(wv.shape), xv.dtype, tuple(stride), tuple(padding), tuple(dilation),
                 groups, has_bias)

        with_residual = residual is not None

        def signatures():
            sigs = [ops.conv_signature(*shape, activation, layouts, "forward", with_residual)]
            if needs_grad:
                sigs += ops.conv_backward_signatures(*shape, layouts, frozenset(("input", "weight", "bias")))
            return sigs

        def recomputed():
            # The gradient of a fused activation recomputes its input: the conv (and residual) without it
            # (boo.ops' _conv_backward_rule, _conv_residual_backward_rule).
            return [ops.conv_signature(*shape, "none", layouts, "forward", with_residual)]

        # (z's gradient alone, conv's parameters frozen, recomputes the activation's input too.)
        recomputes = activation != "none" and (needs_grad or (with_residual and _value(residual).requires_grad))
        if not check(signatures, [xv], recomputed if recomputes else None):
            continue
        end = fused or add or bn or node
        # Before the last node replaced: the batch norm's parameters may be defined after the conv.
        with graph.inserting_before(end):
            if bn is not None:
                gamma, beta, mean, var, eps = bn_parameters
                pair = graph.call_function(_fold_batch_norm, (w, b, gamma, beta, mean, var, eps))
                w, b = (graph.call_function(operator.getitem, (pair, i)) for i in range(2))
            kwargs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
                      "activation": activation}
            if with_residual:
                kwargs["residual"] = residual
            new = graph.call_function(ops.conv, (x, w, b), kwargs)
        new.meta.update(end.meta)
        end.replace_all_uses_with(new)
        for n in (fused, add, bn, node):
            if n is not None:
                graph.erase_node(n)
        count += 1
    return count


def _rewrite_layer_norms(graph, check):
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _LAYER_NORMS:
            continue
        x, shape, w, b, eps = _call_arguments(node, ("input", "normalized_shape", "weight", "bias", "eps"),
                                              (None, None, None, None, 1e-5))
        xv = _value(x)
        if not isinstance(xv, torch.Tensor) or not isinstance(eps, (int, float)) or (w is None and b is not None):
            continue
        shape = tuple(shape) if not isinstance(shape, int) else (shape,)
        needs_grad = xv.requires_grad or any(isinstance(_value(t), torch.Tensor) and _value(t).requires_grad
                                             for t in (w, b))

        def signatures():
            common = (tuple(xv.shape), len(shape), xv.dtype, w is not None, b is not None, eps)
            flags = _C.LayerNormDirection
            backward = flags.BACKWARD_DATA | flags.BACKWARD_WEIGHT | flags.BACKWARD_BIAS
            return [ops.layer_norm_signature(*common, flags.FORWARD)] + (
                [ops.layer_norm_signature(*common, backward)] if needs_grad else [])

        if not check(signatures, [xv]):
            continue
        _replace(graph, node, ops.layer_norm, (x, shape, w, b, float(eps)))
        count += 1
    return count


def _rewrite_rms_norms(graph, check):
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _RMS_NORMS:
            continue
        x, shape, w, eps = _call_arguments(node, ("input", "normalized_shape", "weight", "eps"),
                                           (None, None, None, None))
        xv = _value(x)
        if not isinstance(xv, torch.Tensor) or not (eps is None or isinstance(eps, (int, float))):
            continue
        shape = tuple(shape) if not isinstance(shape, int) else (shape,)
        if eps is None and xv.dtype in (torch.float32, torch.float16, torch.bfloat16):
            eps = torch.finfo(xv.dtype).eps
        needs_grad = xv.requires_grad or (isinstance(_value(w), torch.Tensor) and _value(w).requires_grad)

        def signatures():
            common = (tuple(xv.shape), len(shape), xv.dtype, w is not None, eps)
            return [ops.rms_norm_signature(*common, "forward")] + (
                [ops.rms_norm_signature(*common, "backward")] if needs_grad else [])

        if not check(signatures, [xv]):
            continue
        _replace(graph, node, ops.rms_norm, (x, shape, w, float(eps)))
        count += 1
    return count


def _needs_grad(*nodes):
    return any(isinstance(_value(t), torch.Tensor) and _value(t).requires_grad for t in nodes)


def _rewrite_batch_norms(graph, check):
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _BATCH_NORMS:
            continue
        values = dict(zip(_BATCH_NORMS[node.target][0], _call_arguments(node, *_BATCH_NORMS[node.target])))
        x, w, b, rm, rv = (values[k] for k in ("input", "weight", "bias", "running_mean", "running_var"))
        training, momentum, eps = values["training"], values["momentum"], values["eps"]
        xv = _value(x)
        if not isinstance(xv, torch.Tensor) or xv.dim() < 2 or not isinstance(training, bool) \
                or not isinstance(momentum, (int, float)) or not isinstance(eps, (int, float)) \
                or (rm is None) != (rv is None) or (not training and rm is None):
            continue
        needs_grad = training and _needs_grad(x, w, b)

        def signatures():
            xb = ops._as_rank(xv, 4, 5)
            common = (tuple(xb.shape), xv.dtype, ops._norm_layout(xb))
            if not training:
                return [ops.batch_norm_signature(*common, "inference", True, eps)]
            running = rm is not None
            return [ops.batch_norm_signature(*common, "training", running, eps, momentum if running else 1.0)] + (
                [ops.batch_norm_signature(*common, "backward", False, eps)] if needs_grad else [])

        if not check(signatures, [xv]):
            continue
        _replace(graph, node, ops.batch_norm, (x, w, b, rm, rv, training, float(momentum), float(eps)))
        count += 1
    return count


def _rewrite_group_norms(graph, check):
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _GROUP_NORMS:
            continue
        x, groups, w, b, eps = _call_arguments(node, ("input", "num_groups", "weight", "bias", "eps"),
                                               (None, None, None, None, 1e-5))
        xv = _value(x)
        if not isinstance(xv, torch.Tensor) or xv.dim() < 2 or not isinstance(groups, int) \
                or not isinstance(eps, (int, float)):
            continue
        needs_grad = _needs_grad(x, w, b)

        def signatures():
            xg = ops._as_rank(xv, 3, 5)
            common = (tuple(xg.shape), xv.dtype, groups, w is not None or b is not None, eps, ops._norm_layout(xg))
            return [ops.group_norm_signature(*common, "forward")] + (
                [ops.group_norm_signature(*common, "backward")] if needs_grad else [])

        if not check(signatures, [xv]):
            continue
        _replace(graph, node, ops.group_norm, (x, groups, w, b, float(eps)))
        count += 1
    return count


_MATMULS = (torch.matmul, torch.mm, torch.bmm, operator.matmul)


def _rewrite_matmuls(graph, check):
    """torch.matmul, mm, bmm and @ of operands boo.ops.matmul takes (at least 2 dims, the same batch dims,
    one dtype) and F.linear, as boo.ops.matmul and boo.ops.linear."""
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _MATMULS + (F.linear,):
            continue
        linear = node.target is F.linear
        if linear:
            x, w, b = _call_arguments(node, ("input", "weight", "bias"), (None, None, None))
            xv, wv = _value(x), _value(w)
            if not isinstance(xv, torch.Tensor) or not isinstance(wv, torch.Tensor) or wv.dim() != 2 \
                    or xv.dim() < 1 or xv.dtype != wv.dtype:
                continue
            shapes = (1, math.prod(xv.shape[:-1]), xv.shape[-1], wv.shape[0])
        else:
            a, b = node.args[:2] if len(node.args) >= 2 else (None, None)
            av, bv = _value(a), _value(b)
            if not isinstance(av, torch.Tensor) or not isinstance(bv, torch.Tensor) or av.dim() < 2 \
                    or bv.dim() < 2 or av.shape[:-2] != bv.shape[:-2] or av.dtype != bv.dtype:
                continue
            shapes = (math.prod(av.shape[:-2]), av.shape[-2], av.shape[-1], bv.shape[-1])
            xv = av

        def signatures():
            # The forward's product; the gradients' are the same GEMMs of transposed views, checked at run time.
            return [ops.matmul_signature(*shapes, xv.dtype)]

        if xv.dtype not in ops._GEMM_TOKENS or not check(signatures, [xv]):
            continue
        _replace(graph, node, ops.linear if linear else ops.matmul, (x, w, b) if linear else (a, b))
        count += 1
    return count


def _rewrite_graph(graph, schema, check):
    """Rewrites `graph` in place, taking the candidates that `check(signatures, tensors, warm_only=None)`
    accepts; returns {op: nodes replaced}."""
    return {"conv": _rewrite_convs(graph, schema, check) if schema["conv"] else 0,
            "layer_norm": _rewrite_layer_norms(graph, check) if schema["layer_norm"] else 0,
            "rms_norm": _rewrite_rms_norms(graph, check) if schema["rms_norm"] else 0,
            "batch_norm": _rewrite_batch_norms(graph, check) if schema["batch_norm"] else 0,
            "group_norm": _rewrite_group_norms(graph, check) if schema["group_norm"] else 0,
            "matmul": _rewrite_matmuls(graph, check) if schema["matmul"] else 0}


def _compile_threads():
    """The warm-up's threads: BOO_COMPILE_JOBS, else the CPUs this process may run on."""
    value = os.environ.get("BOO_COMPILE_JOBS", "").strip()
    if not value:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if not value.isdigit():
        raise ValueError(f"BOO_COMPILE_JOBS={value!r}: expected a number of threads (0 or 1: no warm-up, each "
                         f"kernel compiled when its candidate is checked)")
    return int(value)


def _warm_up(graph, schema):
    """Compiles (or loads from the cache) the kernels of every candidate the rewrite of `graph` will check
    on a GPU, on BOO_COMPILE_JOBS threads, before the checks, which then find them loaded: the checks
    compile one kernel after another, and ResNet-50's training graph has about a hundred. The signatures
    come from a dry run of the rewrite on a copy of the graph that takes every candidate, so they are the
    real rewrite's whenever boo takes them all (an inference batch norm folded into its conv is no batch
    norm candidate). A signature that fails here is left to its check, which compiles it again and warns
    as before. The kernels go into the GPU's runtime, where the checks and the ops find them, and through
    it into the disk cache when that is on; with BOO_CACHE_ON=0 they are compiled into the process all
    the same, as the checks would."""
    threads = _compile_threads()
    if threads <= 1 or not any(isinstance(_value(n), torch.Tensor) and _value(n).device.type == "cuda"
                               for n in graph.nodes):
        return
    wanted = {}  # device index -> {signature: None}, in the order met

    def collect(sig_of, tensors, warm_only=None):
        device = tensors[0].device
        if device.type == "cuda" and not _symbolic(tensors):
            try:
                sigs = sig_of() + (warm_only() if warm_only else [])
            except (ValueError, NotImplementedError, RuntimeError):
                return False  # its check warns
            wanted.setdefault(device.index or 0, {}).update(dict.fromkeys(sigs))
        return device.type in ("cuda", "cpu")

    copy = torch.fx.Graph()
    copy.output(copy.graph_copy(graph, {}))
    _rewrite_graph(copy, schema, collect)
    for device, sigs in wanted.items():
        start = time.perf_counter()
        try:
            failures = _C.prepare(list(sigs), device, threads)
        except (ValueError, NotImplementedError, RuntimeError) as e:
            log.debug("boo: no kernel warm-up on cuda:%d (%s): the checks compile the kernels", device, e)
            continue
        for command, error in failures:
            log.debug("boo: warm-up of '%s' failed, left to its check: %s", command, error)
        log.debug("boo: the kernels of %d signatures ready on cuda:%d in %.2f s on %d threads (%d failed)",
                  len(sigs), device, time.perf_counter() - start, threads, len(failures))


def rewrite(gm, fusion_schema=None):
    """Rewrites `gm` (a Dynamo FX graph) in place; returns {op: nodes replaced}."""
    schema = dict(DEFAULT_FUSION_SCHEMA, **(fusion_schema or {}))
    _warm_up(gm.graph, schema)
    counts = _rewrite_graph(gm.graph, schema, _boo_can_run)
    gm.graph.lint()
    gm.recompile()
    log.debug("boo: rewrote %s", counts)
    return counts


def backend(nested_backend="eager", fusion_schema=None):
    """A torch.compile backend: boo's rewrite, then `nested_backend` ("eager",
    "inductor", or any backend callable) on the rewritten graph.

    torch.compile passes a custom backend its `mode` and `options` (only when
    given: not for mode="default"); they are inductor's and go to it as
    torch.compile's own inductor backend applies them (mode="reduce-overhead":
    CUDA graphs through cudagraph trees), or to a nested backend that takes
    them. The eager nested backend has nothing they could change: it refuses
    them rather than ignore a request for CUDA graphs.

    With nested_backend "inductor" the schema starts from DEFAULT_FUSION_SCHEMA
    updated by INDUCTOR_FUSION_DEFAULTS (batch norms left to inductor's fusions);
    `fusion_schema` overrides either."""
    if nested_backend == "inductor":
        fusion_schema = dict(INDUCTOR_FUSION_DEFAULTS, **(fusion_schema or {}))

    def compile_graph(gm, example_inputs, **compile_options):
        rewrite(gm, fusion_schema)
        if nested_backend == "eager":
            if compile_options:
                given = ", ".join(f"{k}={v!r}" for k, v in compile_options.items())
                raise ValueError(f"boo's eager backend runs the graph as it is, and torch.compile's mode and "
                                 f"options are inductor's (got {given}): use backend=\"boo_inductor\"")
            return gm.forward
        if nested_backend == "inductor":
            # torch.compile(backend="inductor")'s own wrapper: the mode's config patches and the options,
            # checked against inductor's config, then compile_fx with them.
            return torch._TorchCompileInductorWrapper(compile_options.get("mode"), compile_options.get("options"),
                                                      None)(gm, example_inputs)
        if callable(nested_backend):
            return nested_backend(gm, example_inputs, **compile_options)
        from torch._dynamo import lookup_backend
        return lookup_backend(nested_backend)(gm, example_inputs, **compile_options)
    return compile_graph


def boo_backend(gm, example_inputs, **compile_options):
    """The "boo" torch.compile backend: boo's ops, everything else eager."""
    return backend("eager")(gm, example_inputs, **compile_options)


def boo_inductor_backend(gm, example_inputs, **compile_options):
    """The "boo_inductor" torch.compile backend: boo's ops, everything else through inductor
    (torch.compile's mode and options apply to inductor: mode="reduce-overhead" is CUDA graphs);
    batch norms are inductor's (INDUCTOR_FUSION_DEFAULTS)."""
    return backend("inductor")(gm, example_inputs, **compile_options)


# iree-turbine BOO's backend names (pyproject.toml registers them as torch_dynamo_backends).
iree_boo_backend = boo_backend
iree_boo_inductor_backend = boo_inductor_backend
iree_boo_experimental_backend = boo_inductor_backend
