"""Drop-in modules: torch.nn's constructors, initialization and state_dict,
with forward through boo's ops. `replace_modules(model)` swaps them in place;
`replace_convs_with_boo` and `replace_conv2d_with_boo_conv` are iree-turbine
BOO's names for swapping the convolutions alone."""
import torch

from . import ops

__all__ = ["Conv1d", "Conv2d", "Conv3d", "LayerNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
           "GroupNorm", "replace_modules", "replace_convs_with_boo", "replace_conv2d_with_boo_conv"]


class _BooConv:
    """The forward shared by boo's ConvNd modules (mixed into torch's)."""

    def forward(self, x):
        # Unbatched input (C, spatial...), as torch.nn's ConvNd takes it: a batch of one.
        if x.dim() == len(self.kernel_size) + 1:
            return self._forward(x.unsqueeze(0)).squeeze(0)
        return self._forward(x)

    def _forward(self, x):
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


class _BooBatchNorm:
    """The forward shared by boo's BatchNormNd modules (mixed into torch's): torch.nn's _BatchNorm.forward
    step for step (num_batches_tracked, momentum or, with momentum=None, the cumulative average; batch
    statistics in training, or in eval without running statistics), through boo.ops.batch_norm."""

    def forward(self, x):
        self._check_input_dim(x)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        tracked = not self.training or self.track_running_stats
        running_mean = self.running_mean if tracked else None
        running_var = self.running_var if tracked else None
        if bn_training and running_mean is not None and self.momentum is None:
            return self._cumulative(x, factor)
        return ops.batch_norm(x, self.weight, self.bias, running_mean, running_var, bn_training, factor, self.eps)

    def _cumulative(self, x, factor):
        # A momentum that changes every step would be a new signature every step: the kernel takes
        # momentum 1 (the batch's mean and unbiased variance, into float32 scratch) and the
        # average is updated here, as PyTorch's r = (1 - f) * r + f * batch.
        channels = self.running_mean.numel()
        mean = torch.zeros(channels, dtype=torch.float32, device=self.running_mean.device)
        var = torch.zeros_like(mean)
        y = ops.batch_norm(x, self.weight, self.bias, mean, var, True, 1.0, self.eps)
        with torch.no_grad():
            self.running_mean.copy_((1 - factor) * self.running_mean.float() + factor * mean)
            self.running_var.copy_((1 - factor) * self.running_var.float() + factor * var)
        return y


class BatchNorm1d(_BooBatchNorm, torch.nn.BatchNorm1d):
    pass


class BatchNorm2d(_BooBatchNorm, torch.nn.BatchNorm2d):
    pass


class BatchNorm3d(_BooBatchNorm, torch.nn.BatchNorm3d):
    pass


class GroupNorm(torch.nn.GroupNorm):
    def forward(self, x):
        return ops.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)


_REPLACEMENTS = {torch.nn.Conv1d: Conv1d, torch.nn.Conv2d: Conv2d, torch.nn.Conv3d: Conv3d,
                 torch.nn.LayerNorm: LayerNorm, torch.nn.RMSNorm: RMSNorm, torch.nn.BatchNorm1d: BatchNorm1d,
                 torch.nn.BatchNorm2d: BatchNorm2d, torch.nn.BatchNorm3d: BatchNorm3d,
                 torch.nn.GroupNorm: GroupNorm}


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


_CONV_DIMS = {torch.nn.Conv1d: 1, torch.nn.Conv2d: 2, torch.nn.Conv3d: 3}


def replace_modules(model, types=None, *, allowed_spatial_dims=(1, 2, 3), kwarg_mapping=None):
    """Replaces, in place, every torch.nn.Conv1d/2d/3d, LayerNorm, RMSNorm, BatchNorm1d/2d/3d and
    GroupNorm in `model` (or only those of `types`; subclasses such as SyncBatchNorm stay) by boo's, sharing their parameters. Returns
    `model` (itself replaced when it is one of those modules).

    Convolutions are filtered as iree-turbine BOO's replace_convs_with_boo does:
    only those of `allowed_spatial_dims`, and of those only the ones whose
    attributes equal `kwarg_mapping[spatial_dims]`, e.g. {2: {"stride": (1, 1)}}
    replaces only the 2-D convolutions of stride 1."""
    bad_dims = [d for d in allowed_spatial_dims if d not in (1, 2, 3)]
    if bad_dims:
        raise ValueError(f"allowed_spatial_dims: {bad_dims} are not convolution dimensions; use 1, 2 or 3")
    kwarg_mapping = kwarg_mapping or {}
    bad_keys = [d for d in kwarg_mapping if d not in (1, 2, 3)]
    if bad_keys:
        raise ValueError(f"kwarg_mapping: keys {bad_keys} are not convolution dimensions; use 1, 2 or 3")
    wanted = tuple(types) if types is not None else tuple(_REPLACEMENTS)

    def chosen(module):
        if not isinstance(module, wanted) or type(module) not in _REPLACEMENTS:
            return False
        dims = _CONV_DIMS.get(type(module))
        if dims is None:
            return True
        if dims not in allowed_spatial_dims:
            return False
        for name, value in kwarg_mapping.get(dims, {}).items():
            if not hasattr(module, name):
                raise ValueError(f"kwarg_mapping[{dims}]: {type(module).__name__} has no attribute {name!r}")
            if getattr(module, name) != value:
                return False
        return True

    if isinstance(model, wanted):
        return (_swap(model) or model) if chosen(model) else model
    # Chosen first, swapped after: a bad filter raises before anything is replaced.
    swaps = []

    def collect(parent):
        for name, child in parent.named_children():
            if chosen(child):
                swaps.append((parent, name, child))
            else:
                collect(child)

    collect(model)
    for parent, name, child in swaps:
        swapped = _swap(child)
        if swapped is not None:
            setattr(parent, name, swapped)
    return model


def replace_convs_with_boo(model, *, allowed_spatial_dims=(1, 2, 3), kwarg_mapping=None):
    """iree-turbine BOO's name: replace_modules for the convolutions alone (parameters are
    shared with the replaced modules, where BOO copies them)."""
    return replace_modules(model, tuple(_CONV_DIMS), allowed_spatial_dims=allowed_spatial_dims,
                           kwarg_mapping=kwarg_mapping)


def replace_conv2d_with_boo_conv(model, **kwargs):
    """iree-turbine BOO's name: replaces the Conv2d modules whose attributes equal `kwargs`
    (e.g. stride=(1, 1)); all of them without kwargs."""
    return replace_convs_with_boo(model, allowed_spatial_dims=(2,), kwarg_mapping={2: kwargs})
