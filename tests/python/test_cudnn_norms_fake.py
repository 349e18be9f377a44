"""The cudnn backend's norm baselines on a stand-in for libcudnn (with the fake libcuda): which graph
operation (cuDNN's norm forward/backward, with a pointwise add for add-layernorm) or legacy batch norm
call each kind of line gets, with which tensor shapes and strides, and that what cuDNN does not
have is reported under the vendor's name while boo's line still runs (and is the only one judged).
The stand-in computes nothing: results are not checked here (tests/gpu/norm_vendor_lines.txt does
that on a GPU).

Run by ctest with BOO_CUDA_DRIVER_DIR and BOO_CUDNN_DIR naming the fakes, as:
python3 tests/python/test_cudnn_norms_fake.py <boo-driver>
"""
import os
import pathlib
import subprocess
import sys
import tempfile

# (command, what the output says of cudnn, lines the fake's log must hold)
CASES = [
    # Graph API: batch norm (mode 2) training (phase 1) with running statistics, and its backward.
    ("bnormbfp16 -n 8 -c 64 -H 14 -W 14 -m 1 --forw 1 -b 0 -s 1 -r 1 --layout NHWC",
     "cudnn:batchnorm [engine", ["norm-forward mode 2 phase 1 running 1"]),
    ("bnormbfp16 -n 8 -c 64 -H 14 -W 14 -m 1 --forw 0 -b 1 -s 1 -r 0 --layout NHWC",
     "cudnn:batchnorm [engine", ["norm-backward mode 2"]),
    # Inference from the batch's statistics: the training forward without running statistics.
    ("bnormfp16 -n 4 -c 3 -H 5 -W 6 -m 1 --forw 2 -b 0 -s 0 -r 0",
     "cudnn:batchnorm [engine", ["norm-forward mode 2 phase 1 running 0"]),
    # Legacy calls: per activation (mode 0), NHWC strides, parameters [1, C, H, W] in the layout.
    ("bnorm -n 4 -c 3 -H 5 -W 6 -m 0 --forw 1 -b 0 -s 1 -r 1 --layout NHWC",
     "cudnn:batchnorm [legacy cudnnBatchNormalizationForwardTraining]",
     ["bn-training mode 0 x 4,3,5,6/90,1,18,3 param 1,3,5,6/90,1,18,3 saved 1 running 1"]),
    ("bnormfp16 -n 4 -c 3 -H 5 -W 6 -m 1 --forw 2 -b 0 -s 0 -r 1",
     "cudnn:batchnorm [legacy cudnnBatchNormalizationForwardInference]",
     ["bn-inference mode 1 x 4,3,5,6/90,30,6,1 param 1,3,1,1/3,1,1,1 saved 0 running 1"]),
    ("bnormbfp16 -n 4 -c 3 -D 2 -H 5 -W 6 -m 1 --forw 0 -b 1 -s 0 -r 0 --layout NDHWC",
     "cudnn:batchnorm [legacy cudnnBatchNormalizationBackward]",
     ["bn-backward mode 1 x 4,3,2,5,6/180,1,90,18,3 param 1,3,1,1,1/3,1,3,3,3 saved 0 running 0"]),
    # Add-layernorm: x + x2 (pointwise) feeding a layer norm (mode 0).
    ("addlayernormbfp16 -X 32x256 -o 1 -m 3 -F 1",
     "cudnn:addlayernorm [engine", ["pointwise", "norm-forward mode 0 phase 1 running 0"]),
    # Declined, saying why.
    ("bnormbfp16fp32 -n 4 -c 3 -H 5 -W 6 -m 0 --forw 1 -b 0 -s 1 -r 0",
     "cudnn: not run: cuDNN declines this batch norm: its graph API: cuDNN's graph API batch norm normalizes "
     "per channel (-m 1), not per activation; its legacy API: cuDNN's legacy batch norm takes float32 scale "
     "and bias", []),
    ("groupnormfp16 -n 2 -c 320 -D 0 -H 8 -W 8 -g 32 -m 1 -F 1 --layout NHWC",
     "cudnn: not run: cuDNN has no group norm", []),
]


def run(driver, tmp, command, *extra):
    """Runs one command on boo and cudnn, timed (the output names each implementation) unless extra says -t 0."""
    log = tmp / "fake.log"
    if log.exists():
        log.unlink()
    env = dict(os.environ, FAKE_CUDNN_LOG=str(log))
    r = subprocess.run([driver, "--backend", "boo", "--backend", "cudnn", "--cache-dir", str(tmp / "cache"),
                        *command.split(), *(extra or ("-t", "1", "--iter", "2"))],
                       capture_output=True, text=True, env=env)
    events = log.read_text().split("\n")[:-1] if log.exists() else []
    return r, events


def main():
    driver = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        for command, said, logged in CASES:
            r, events = run(driver, tmp, command)
            assert r.returncode == 0, (command, r.stdout + r.stderr)
            assert said in r.stdout, (command, said, r.stdout)
            for line in logged:
                assert line in events, (command, line, events)
            if not logged:  # nothing was asked of cuDNN
                assert not any(e.startswith(("norm-", "bn-", "pointwise")) for e in events), (command, events)

        # A baseline that declined is not judged by --verify-numerics: boo alone is.
        r, _ = run(driver, tmp, "groupnormfp16 -n 2 -c 64 -D 0 -H 4 -W 4 -g 8 -m 1 -F 1 --layout NHWC",
                   "-t", "0", "--verify-numerics", "--numerics-vendor", "none", "--skip-structured-tests")
        assert "boo Numerics:" in r.stdout and "cudnn Numerics:" not in r.stdout, r.stdout + r.stderr
    print("each norm line gets its cuDNN operation or legacy call, or the reason it has none")


if __name__ == "__main__":
    main()
