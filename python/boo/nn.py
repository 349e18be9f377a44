"""Drop-in modules: torch.nn's constructors, initialization and state_dict,
with forward through boo's ops. `replace_modules(model)` swaps them in place."""
import torch

from . import ops

__all__ = ["Conv1d", "Conv2d", "Conv3d", "LayerNorm", "RMSNorm", "replace_modules"]


class _BooConv:
    """The forward shared by boo's ConvNd modules (mixed into torch's)."""

    def forward(self, x):
        if self.padding_mode != "zeros" or self._asymmetric_padding():
            # Non-zero padding modes and the asymmetric 'same' padding of even
            # kernels: pad explicitly, as torch.nn does for padding modes.
            mode = "constant" if self.padding_mode == "zeros" else self.padding_mode
            x = torch.nn.functional.pad(x, self._reversed_padding_repeated_twice, mode=mode)
            padding = 0
        else:
            padding = self._symmetric_padding()
        return ops.conv(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)

    def _pads(self):
        # (before, after) per spatial dimension, outermost first.
        r = self._reversed_padding_repeated_twice
        return [(r[2 * i], r[2 * i + 1]) for i in reversed(range(len(r) // 2))]

    def _asymmetric_padding(self):
        return any(before != after for before, after in self._pads())

    def _symmetric_padding(self):
        return [before for before, _ in self._pads()]


class Conv1d(_BooConv, torch.nn.Conv1d):
    pass


class Conv2d(_BooConv, torch.nn.Conv2d):
    pass


class Conv3d(_BooConv, torch.nn.Conv3d):
    pass


class LayerNorm(torch.nn.LayerNorm):
    def forward(self, x):
        return ops.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class RMSNorm(torch.nn.RMSNorm):
    def forward(self, x):
        return ops.rms_norm(x, self.normalized_shape, self.weight, self.eps)


_REPLACEMENTS = {torch.nn.Conv1d: Conv1d, torch.nn.Conv2d: Conv2d, torch.nn.Conv3d: Conv3d,
                 torch.nn.LayerNorm: LayerNorm, torch.nn.RMSNorm: RMSNorm}


def _swap(module):
    """The boo module for a torch.nn one, sharing its parameters and buffers; None if none applies."""
    cls = _REPLACEMENTS.get(type(module))
    if cls is None:
        return None
    if isinstance(module, torch.nn.LayerNorm) and module.weight is None and module.bias is not None:
        return None  # no boo signature for a bias without a weight
    new = cls.__new__(cls)
    new.__dict__.update(module.__dict__)  # same Parameters: optimizers and hooks keep working
    return new


def replace_modules(model, types=None):
    """Replaces, in place, every torch.nn.Conv1d/2d/3d, LayerNorm and RMSNorm in `model`
    (or only those of `types`) by boo's, sharing their parameters. Returns
    `model` (itself replaced when it is one of those modules)."""
    wanted = tuple(types) if types is not None else tuple(_REPLACEMENTS)
    if isinstance(model, wanted):
        return _swap(model) or model
    for name, child in list(model.named_children()):
        if isinstance(child, wanted) and type(child) in _REPLACEMENTS:
            swapped = _swap(child)
            if swapped is not None:
                setattr(model, name, swapped)
        else:
            replace_modules(child, types)
    return model
