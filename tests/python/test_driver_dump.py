"""boo-driver --dump on the CPU: the dumped results must match an independent
NumPy computation of the same convolution and layer norm.

Run by ctest (label unit) as: python3 tests/python/test_driver_dump.py <boo-driver>
"""
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

CONV = ("convbfp16 -n 2 -c 4 -H 7 -W 9 -k 6 -y 3 -x 2 -p 1 -q 0 -u 2 -v 1 -l 1 -j 2 -g 2 -F 1 -b 1 "
        "--activation relu --in_layout NHWC --fil_layout NHWC --out_layout NHWC")
CONV_WRW = "conv -n 2 -c 3 -H 6 -W 5 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 4 --in_layout NHWC"
LAYERNORM = "layernormfp16 -X 3x5x16 -o 2 -m 1 -e 1e-5 -F 1"


def run_driver(driver, command, dump_dir):
    args = [driver, *command.split(), "--dump", str(dump_dir), "--verbose", "--backend", "cpu"]
    out = subprocess.run(args, capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(args)}\n{out.stdout}\n{out.stderr}"
    (cmd_dir,) = [p for p in pathlib.Path(dump_dir).iterdir() if p.is_dir()]
    return {p.stem: np.load(p).astype(np.float64) for p in cmd_dir.glob("*.npy")}, cmd_dir


def conv2d_forward(x, w, stride, pad, dil, groups):
    """Direct NCHW convolution in float64, written without boo's code."""
    n, c, h, wd = x.shape
    k, cpg, fy, fx = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    ho = (h + 2 * pad[0] - dil[0] * (fy - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * pad[1] - dil[1] * (fx - 1) - 1) // stride[1] + 1
    y = np.zeros((n, k, ho, wo))
    kpg = k // groups
    for g in range(groups):
        xs = xp[:, g * cpg:(g + 1) * cpg]
        ws = w[g * kpg:(g + 1) * kpg]
        for r in range(fy):
            for s in range(fx):
                patch = xs[:, :, r * dil[0]: r * dil[0] + stride[0] * (ho - 1) + 1: stride[0],
                           s * dil[1]: s * dil[1] + stride[1] * (wo - 1) + 1: stride[1]]
                y[:, g * kpg:(g + 1) * kpg] += np.einsum("nchw,kc->nkhw", patch, ws[:, :, r, s])
    return y


def bf16_round(a):
    """Rounds float64 values to bfloat16 (round to nearest even), via float32 bits."""
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def check_conv(driver, tmp):
    t, cmd_dir = run_driver(driver, CONV, tmp / "conv")
    x, w, b = t["input_0_x"], t["input_1_w"], t["input_2_b"]
    y = t["cpu_result_0_y"]
    assert x.shape == (2, 4, 7, 9) and w.shape == (6, 2, 3, 2) and y.shape == (2, 6, 4, 7), (x.shape, w.shape, y.shape)
    expected = np.maximum(conv2d_forward(x, w, (2, 1), (1, 0), (1, 2), 2) + b[None, :, None, None], 0)
    # boo's result is the float64 reference rounded once to bf16.
    np.testing.assert_array_equal(y, bf16_round(expected))
    manifest = (cmd_dir / "manifest.txt").read_text()
    assert "memory layout NHWC" in manifest and "func_name: conv_2d_bfloat16_forward_b_" in manifest, manifest


def check_conv_weight_backward(driver, tmp):
    t, _ = run_driver(driver, CONV_WRW, tmp / "wrw")
    dy, x, dw = t["input_0_dy"], t["input_1_x"], t["cpu_result_0_dw"]
    # dw[k, c, r, s] = sum_{n, h, w} dy[n, k, h, w] * xpad[n, c, h + r, w + s]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = np.zeros(dw.shape)
    for r in range(3):
        for s in range(3):
            expected[:, :, r, s] = np.einsum("nkhw,nchw->kc", dy, xp[:, :, r:r + 6, s:s + 5])
    np.testing.assert_allclose(dw, expected.astype(np.float32), rtol=1e-6, atol=1e-6)


def check_layernorm(driver, tmp):
    t, _ = run_driver(driver, LAYERNORM, tmp / "ln")
    x, w, b = t["input_0_x"], t["input_1_weight"], t["input_2_bias"]
    y, mean, rstd = t["cpu_result_0_y"], t["cpu_result_1_mean"], t["cpu_result_2_rstd"]
    mu = x.mean(axis=2, keepdims=True)
    var = x.var(axis=2, keepdims=True)
    expected = (x - mu) / np.sqrt(var + 1e-5) * w + b
    np.testing.assert_allclose(y, expected.astype(np.float16), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(mean, mu, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(var + 1e-5), rtol=1e-6)


def main():
    driver = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        check_conv(driver, tmp)
        check_conv_weight_backward(driver, tmp)
        check_layernorm(driver, tmp)
    print("driver dumps match NumPy")


if __name__ == "__main__":
    main()
