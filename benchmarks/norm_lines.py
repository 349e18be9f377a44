"""The lines of benchmarks/norm_shapes.txt as the norm benchmarks read them (torch_norms.py times PyTorch
on them, norm_table.py joins its CSV with boo-driver's): which op and direction, the shape, layout and
element sizes, the bytes that must move, and the key joining the two CSVs.

Bytes that must move: the forward reads x and writes y; the backward reads dy and x and writes dx
(parameters and statistics are small and not counted). Batch norm's x and y are the data type's, dy and
dx float32 in bnormfp16fp32/bnormbfp16fp32.
"""
import math
import re
from dataclasses import dataclass

_SIZES = {"": 4, "fp16": 2, "bfp16": 2}
_TORCH = {"": "float32", "fp16": "float16", "bfp16": "bfloat16"}


@dataclass
class NormLine:
    op: str          # layernorm, rmsnorm, batchnorm, groupnorm
    direction: str   # fwd (training forward), inf (inference forward) or bwd
    shape: tuple     # (rows, cols), or (N, C, [D,] H, W)
    layout: str      # "rows", or the tensors' layout (NCHW, NHWC, ...)
    dtype: str       # torch dtype name of x
    data_bytes: int  # bytes per element of x and y
    grad_bytes: int  # bytes per element of dy and dx
    groups: int = 0  # group norm's groups

    @property
    def key(self):
        """The torch CSV's row of this line: "RxC" for the row norms (their columns name the op)."""
        if self.op in ("layernorm", "rmsnorm"):
            return "x".join(map(str, self.shape))
        g = f":g{self.groups}" if self.groups else ""
        return f"{self.op}:{self.dtype}:{self.layout}:{'x'.join(map(str, self.shape))}{g}"

    @property
    def moved_bytes(self):
        n = math.prod(self.shape)
        return n * (self.data_bytes + 2 * self.grad_bytes if self.direction == "bwd" else 2 * self.data_bytes)


def _flag(words, *names, default=None):
    for i, w in enumerate(words[:-1]):
        if w in names:
            return words[i + 1]
    return default


def parse(line):
    """The NormLine of a command, or None for a comment, a blank or another op's line."""
    words = line.split()
    if not words or words[0].startswith("#"):
        return None
    token = words[0]
    m = re.fullmatch(r"(t5layernorm|layernorm)(fp16|bfp16)?", token)
    if m and "-X" in words:
        rows, cols = map(int, _flag(words, "-X").split("x"))
        dt = m.group(2) or ""
        backward = _flag(words, "-F") in ("14", "2")
        return NormLine("rmsnorm" if m.group(1) == "t5layernorm" else "layernorm", "bwd" if backward else "fwd",
                        (rows, cols), "rows", _TORCH[dt], _SIZES[dt], _SIZES[dt])
    m = re.fullmatch(r"bnorm(fp16|bfp16)?(fp32)?", token)
    if m:
        dt = m.group(1) or ""
        dims = [int(_flag(words, "-n", "--batchsize")), int(_flag(words, "-c", "--in_channels"))]
        d = _flag(words, "-D", "--in_d")
        dims += ([int(d)] if d and int(d) > 0 else []) + [int(_flag(words, "-H", "--in_h")),
                                                          int(_flag(words, "-W", "--in_w"))]
        forw = _flag(words, "--forw", default="1")
        direction = {"0": "bwd", "1": "fwd", "2": "inf"}[forw]
        return NormLine("batchnorm", direction, tuple(dims), _flag(words, "--layout", "-L", default="NCHW"),
                        _TORCH[dt], _SIZES[dt], 4 if m.group(2) else _SIZES[dt])
    m = re.fullmatch(r"groupnorm(fp16|bfp16)?", token)
    if m:
        dt = m.group(1) or ""
        dims = [int(_flag(words, "-n", "--batchsize")), int(_flag(words, "-c", "--in_channels"))]
        for flag, long in (("-D", "--in_d"), ("-H", "--in_h")):
            v = int(_flag(words, flag, long, default="14"))
            dims += [v] if v > 0 else []
        dims.append(int(_flag(words, "-W", "--in_w", default="14")))
        direction = "bwd" if _flag(words, "-F", default="1") == "2" else "fwd"
        return NormLine("groupnorm", direction, tuple(dims), _flag(words, "--layout", default="NCDHW"),
                        _TORCH[dt], _SIZES[dt], _SIZES[dt], int(_flag(words, "-g", default="4")))
    return None
