"""iree-turbine BOO's keyword signature classes over boo's signatures.

    sig = boo.ConvSignature(input_shape=[8, 56, 56, 64], kernel_shape=[64, 3, 3, 64], shared_layout="NHWC",
                            padding=1, mode="fwd")
    x, w = sig.get_sample_args(device="cuda", seed=10)
    (y,) = boo.get_launchable(sig)(x, w)

The constructors take BOO's keywords with BOO's meaning (shapes in the stated
layouts, BOO's Mode values and spellings) and build the boo signature with the
typed constructors (`.signature`); func_name is BOO's format. What runs is
boo's: sample arguments and launchables follow boo's signature (tensors in
logical N, C, spatial order whose strides carry the layout; a backward takes
only the operands it reads), and get_nn_module() is PyTorch's computation of
the same arguments. README ("BOO's names") lists every difference.
"""
import enum

import torch

from . import _C

__all__ = ["ConvMode", "ConvSignature", "LayerNormMode", "LayerNormSignature", "RMSNormMode", "RMSNormSignature"]

_DEFAULT_CONV_LAYOUTS = {1: "NCH", 2: "NCHW", 3: "NCDHW"}


class _ModeParsing:
    @classmethod
    def parse(cls, spec):
        """BOO's Mode.parse: None is FORWARD, a Mode is itself, a name (any case, '-' for '_', aliases too) its
        member."""
        if spec is None:
            return cls.FORWARD
        if isinstance(spec, cls):
            return spec
        if not isinstance(spec, str):
            raise ValueError(f"mode={spec!r}: expected a {cls.__name__} or one of: {', '.join(cls.__members__)}")
        name = spec.upper().replace("-", "_")
        if name not in cls.__members__:
            raise ValueError(f"mode={spec!r}: expected one of: {', '.join(cls.__members__)}")
        return cls[name]


class ConvMode(_ModeParsing, enum.IntEnum):
    """BOO's conv Mode: a bit mask over the gradients (input, weight, bias); 0 is the forward."""
    FORWARD = 0
    INPUT_BACKWARD = 1
    WEIGHT_BACKWARD = 2
    INPUT_WEIGHT_BACKWARD = 3
    BIAS_BACKWARD = 4
    INPUT_BIAS_BACKWARD = 5
    WEIGHT_BIAS_BACKWARD = 6
    ALL_BACKWARD = 7
    FWD = 0
    BWD = 1
    WRW = 2

    @staticmethod
    def from_backward_mask(mask):
        input_grad, weight_grad, bias_grad = (bool(m) for m in mask)
        return ConvMode(input_grad + 2 * weight_grad + 4 * bias_grad)

    @property
    def backward_mask(self):
        return [bool(self & 1), bool(self & 2), bool(self & 4)]


class LayerNormMode(_ModeParsing, enum.IntEnum):
    """BOO's layer norm Mode (boo's LayerNormDirection values)."""
    FORWARD = 1
    INPUT_BACKWARD = 2
    WEIGHT_BACKWARD = 4
    BIAS_BACKWARD = 8
    FULL_BACKWARD = 14


class RMSNormMode(_ModeParsing, enum.IntEnum):
    """boo's RMS norm modes (BOO has no RMS norm): MIOpen's t5layernorm -F 1, 2 and 0."""
    FORWARD = 1
    BACKWARD = 2
    FORWARD_BACKWARD = 3


def _listify(value, n, name):
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    if len(value) != n:
        raise ValueError(f"{name}={value}: expected an int or {n} ints (one per spatial dimension)")
    return value


class _Signature:
    """What the BOO signature classes share: the boo signature they build, and BOO's methods over it."""
    signature: _C.Signature

    @property
    def func_name(self):
        return self.signature.func_name

    @property
    def command(self):
        return self.signature.command

    def get_sample_args(self, *, device=None, splat_value=None, seed=None):
        """boo's sample arguments of this signature (BOO's keywords): `splat_value` fills every argument
        with that value; otherwise the driver's seeded inputs (seed None: boo's default, 10)."""
        return tuple(self.signature.sample_args(device=device or "cpu", seed=10 if seed is None else seed,
                                                splat_value=splat_value))

    def get_nn_module(self, **kwargs):
        """PyTorch's computation of this signature (BOO's use_custom selects an IREE lowering; boo has
        one reference, so it is accepted and ignored)."""
        unknown = set(kwargs) - {"use_custom"}
        if unknown:
            raise TypeError(f"get_nn_module: unexpected keywords {sorted(unknown)}")
        return self.signature.get_nn_module()

    def __eq__(self, other):
        return isinstance(other, _Signature) and self.signature == other.signature

    def __hash__(self):
        return hash(self.signature)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.as_init_kwargs().items())
        return f"{type(self).__name__}({args})"


class ConvSignature(_Signature):
    """BOO's ConvSignature: shapes given in the stated layouts (layout resolution: shared_layout, else the
    tensor's own, else channels-first); the kernel layout's N is the output channels, C the input channels
    per group."""

    def __init__(self, *, input_shape, kernel_shape, shared_layout=None, input_layout=None, kernel_layout=None,
                 output_layout=None, bias=False, dtype=torch.bfloat16, stride=1, padding=0, dilation=1,
                 transposed=False, output_padding=0, groups=1, mode=ConvMode.FORWARD, backward_mask=None):
        if len(input_shape) != len(kernel_shape):
            raise ValueError(f"Expected same rank for input and kernel, got input_shape={list(input_shape)}, "
                             f"kernel_shape={list(kernel_shape)}")
        spatial = len(input_shape) - 2
        if spatial not in _DEFAULT_CONV_LAYOUTS:
            raise ValueError(f"input_shape={list(input_shape)}: expected 3 to 5 dimensions (N, C, spatial...)")
        default = _DEFAULT_CONV_LAYOUTS[spatial]
        self.input_shape, self.kernel_shape = list(input_shape), list(kernel_shape)
        self.num_spatial_dims = spatial
        self.dtype = dtype
        self.input_layout, self.kernel_layout, self.output_layout = (
            (shared_layout or own or default).upper() for own in (input_layout, kernel_layout, output_layout))
        self.bias = bool(bias)
        self.stride, self.padding, self.dilation, self.output_padding = (
            _listify(v, spatial, n) for v, n in ((stride, "stride"), (padding, "padding"), (dilation, "dilation"),
                                                 (output_padding, "output_padding")))
        self.transposed = bool(transposed)
        self.groups = groups
        self.mode = ConvMode.from_backward_mask(backward_mask) if backward_mask is not None else ConvMode.parse(mode)

        d = _C.ConvDirection
        if self.mode == ConvMode.FORWARD:
            direction = d.FORWARD
        else:
            direction = d(0)
            for wanted, flag in zip(self.mode.backward_mask, (d.BACKWARD_DATA, d.BACKWARD_WEIGHT, d.BACKWARD_BIAS)):
                if wanted:
                    direction |= flag
        self.signature = _C.Signature.conv(
            self._logical(self.input_shape, self.input_layout, "input"),
            self._logical(self.kernel_shape, self.kernel_layout, "kernel"), dtype, stride=self.stride,
            padding=self.padding, dilation=self.dilation, groups=groups, transposed=self.transposed,
            output_padding=self.output_padding, input_layout=self.input_layout, weight_layout=self.kernel_layout,
            output_layout=self.output_layout, direction=direction, bias=self.bias and self.is_forward)

    def _logical(self, shape, layout, name):
        """`shape` (in `layout`'s order) in the logical order N, C, spatial..."""
        default = _DEFAULT_CONV_LAYOUTS[self.num_spatial_dims]
        if sorted(layout) != sorted(default):
            raise ValueError(f"{name}_layout={layout!r}: expected a permutation of {default} for a "
                             f"{self.num_spatial_dims}-D convolution")
        return [shape[layout.index(letter)] for letter in default]

    @property
    def is_forward(self):
        return self.mode == ConvMode.FORWARD

    @property
    def backward_mask(self):
        return self.mode.backward_mask

    @property
    def output_shape(self):
        """The forward's output shape, in the output layout."""
        specs = {s.name: s for s in list(self.signature.arguments) + list(self.signature.results)}
        logical = (specs.get("y") or specs["dy"]).shape
        default = _DEFAULT_CONV_LAYOUTS[self.num_spatial_dims]
        return [logical[default.index(letter)] for letter in self.output_layout]

    @staticmethod
    def get(input, weight, bias=None, **kwargs):
        """The signature of a convolution of these tensors (shapes as given, in the layouts of kwargs)."""
        return ConvSignature(input_shape=list(input.shape), kernel_shape=list(weight.shape), dtype=input.dtype,
                             bias=bias is not None, **kwargs)

    def as_init_kwargs(self):
        return {k: getattr(self, k) for k in ("input_shape", "kernel_shape", "dtype", "input_layout",
                                              "kernel_layout", "output_layout", "bias", "stride", "padding",
                                              "dilation", "transposed", "output_padding", "groups", "mode")}


class LayerNormSignature(_Signature):
    """BOO's LayerNormSignature. boo keeps mean and rstd in float32 (forwarded_args_dtype). `bias` defaults to
    `elementwise_affine` (BOO's True would pair a bias with no weight, which boo's layer norm does not take)."""

    def __init__(self, *, input_shape, normalized_shape, eps=1e-5, elementwise_affine=True, bias=None,
                 dtype=torch.bfloat16, mode=LayerNormMode.FORWARD, forwarded_args_dtype=None,
                 input_permutation=None, use_aten=True):
        if forwarded_args_dtype not in (None, torch.float32):
            raise NotImplementedError(f"forwarded_args_dtype={forwarded_args_dtype}: boo's layer norm keeps mean "
                                      "and rstd in float32")
        self.input_shape, self.normalized_shape = list(input_shape), list(normalized_shape)
        self.eps = eps
        self.elementwise_affine = bool(elementwise_affine)
        self.bias = self.elementwise_affine if bias is None else bool(bias)
        self.dtype = dtype
        self.mode = LayerNormMode.parse(mode)
        self.forwarded_args_dtype = torch.float32
        self.input_permutation = list(input_permutation) if input_permutation is not None else list(
            range(len(self.input_shape)))
        self.use_aten = bool(use_aten)
        self.signature = _C.Signature.layer_norm(
            self.input_shape, self.normalized_shape, dtype, eps=eps, weight=self.elementwise_affine, bias=self.bias,
            direction=_C.LayerNormDirection(int(self.mode)), input_permutation=self.input_permutation,
            use_aten=self.use_aten)

    @property
    def is_forward(self):
        return self.mode == LayerNormMode.FORWARD

    @property
    def output_shape(self):
        return self.input_shape

    @staticmethod
    def get(input, normalized_shape, weight=None, bias=None, mode=LayerNormMode.FORWARD, **kwargs):
        """The signature of a layer norm of these tensors."""
        normalized = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
        for name, t in (("weight", weight), ("bias", bias)):
            if t is not None and list(t.shape) != normalized:
                raise ValueError(f"{name} has shape {list(t.shape)}; expected normalized_shape {normalized}")
        return LayerNormSignature(input_shape=list(input.shape), normalized_shape=normalized,
                                  elementwise_affine=weight is not None, bias=bias is not None, dtype=input.dtype,
                                  mode=mode, **kwargs)

    def as_init_kwargs(self):
        return {k: getattr(self, k) for k in ("input_shape", "normalized_shape", "eps", "elementwise_affine", "bias",
                                              "dtype", "mode", "forwarded_args_dtype", "input_permutation",
                                              "use_aten")}


class RMSNormSignature(_Signature):
    """An RMS norm with BOO's style of keywords (BOO has none): y = x * rstd * weight over the trailing
    normalized_shape."""

    def __init__(self, *, input_shape, normalized_shape, eps=1e-5, elementwise_affine=True, dtype=torch.bfloat16,
                 mode=RMSNormMode.FORWARD):
        self.input_shape, self.normalized_shape = list(input_shape), list(normalized_shape)
        self.eps = eps
        self.elementwise_affine = bool(elementwise_affine)
        self.dtype = dtype
        self.mode = RMSNormMode.parse(mode)
        d = _C.RmsNormDirection
        backward = d.BACKWARD_DATA | d.BACKWARD_WEIGHT if self.elementwise_affine else d.BACKWARD_DATA
        direction = {RMSNormMode.FORWARD: d.FORWARD, RMSNormMode.BACKWARD: backward,
                     RMSNormMode.FORWARD_BACKWARD: d.FORWARD | backward}[self.mode]
        self.signature = _C.Signature.rms_norm(self.input_shape, self.normalized_shape, dtype, eps=eps,
                                               weight=self.elementwise_affine, direction=direction)

    @property
    def is_forward(self):
        return self.mode == RMSNormMode.FORWARD

    @property
    def output_shape(self):
        return self.input_shape

    @staticmethod
    def get(input, normalized_shape, weight=None, mode=RMSNormMode.FORWARD, **kwargs):
        normalized = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
        if weight is not None and list(weight.shape) != normalized:
            raise ValueError(f"weight has shape {list(weight.shape)}; expected normalized_shape {normalized}")
        return RMSNormSignature(input_shape=list(input.shape), normalized_shape=normalized,
                                elementwise_affine=weight is not None, dtype=input.dtype, mode=mode, **kwargs)

    def as_init_kwargs(self):
        return {k: getattr(self, k) for k in ("input_shape", "normalized_shape", "eps", "elementwise_affine",
                                              "dtype", "mode")}
