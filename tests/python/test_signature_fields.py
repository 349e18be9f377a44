"""boo's typed signature constructors (Signature.conv, .layer_norm, .rms_norm, .batch_norm, .group_norm)
against the driver commands they stand for: the same signature (equality, the
canonical command that keys the kernel cache, BOO's function name, the hash),
and clear errors on bad fields. No GPU needed.

Run as: python3 tests/python/test_signature_fields.py   (or: pytest tests/python/test_signature_fields.py)
"""
import sys
import unittest

try:
    import torch

    import boo
    from boo import ops
    from boo import ActivationKind, BatchNormMode as BM, BatchNormPass as BP, ConvDirection as CD, \
        LayerNormDirection as LD, NormDirection as ND, RmsNormDirection as RD
except ImportError as e:
    sys.exit(f"{e.name} is not installed for {sys.executable}: run scripts/test.sh (it installs PyTorch from "
             "requirements-dev.txt and boo with `pip install .`)")

S = boo.Signature

# (typed constructor, the driver command it stands for), written independently of each other.
EQUIVALENTS = [
    (lambda: S.conv([8, 64, 56, 56], [128, 64, 3, 3], "bfloat16", stride=2, padding=1, input_layout="NHWC",
                    weight_layout="nhwc", bias=True, activation=ActivationKind.RELU),
     "convbfp16 -n 8 -c 64 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1 -b 1 "
     "--in_layout NHWC --fil_layout NHWC --out_layout NHWC --activation relu"),
    (lambda: S.conv([2, 32, 10, 10], [32, 1, 3, 3], torch.float16, groups=32, padding=(1, 1)),
     "convfp16 -n 2 -c 32 -H 10 -W 10 -k 32 -y 3 -x 3 -p 1 -q 1 -g 32 -F 1"),
    (lambda: S.conv([1, 4, 5, 6, 7], [8, 4, 3, 3, 3], boo.DType.float32, padding=[1, 0, 1],
                    input_layout="NDHWC"),
     "conv -n 1 -c 4 --in_d 5 -H 6 -W 7 -k 8 --fil_d 3 -y 3 -x 3 --pad_d 1 -p 0 -q 1 --spatial_dim 3 "
     "--in_layout NDHWC --out_layout NDHWC -F 1"),
    (lambda: S.conv([4, 16, 100], [32, 16, 5], "float32", dilation=2),
     "conv -n 4 -c 16 -H 100 -k 32 -y 5 -l 2 --spatial_dim 1 -F 1"),
    (lambda: S.conv([2, 8, 9, 9], [8, 2, 3, 3], "float32", transposed=True, groups=2, stride=2, output_padding=1),
     "conv -n 2 -c 8 -H 9 -W 9 -k 4 -y 3 -x 3 -m trans -u 2 -v 2 -Y 1 -X 1 -g 2 -F 1"),
    (lambda: S.conv([2, 16, 12, 12], [32, 16, 3, 3], "bfloat16", padding=1,
                    direction=CD.BACKWARD_DATA | CD.BACKWARD_WEIGHT | CD.BACKWARD_BIAS),
     "convbfp16 -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -p 1 -q 1 -F 6 -b 1"),
    (lambda: S.conv([2, 16, 12, 12], [32, 16, 3, 3], "bfloat16", direction=CD.BACKWARD_BIAS),
     "convbfp16 -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -F 7"),
    (lambda: S.conv([2, 16, 12, 12], [32, 16, 3, 3], "bfloat16", direction=CD.BACKWARD_WEIGHT),
     "convbfp16 -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -F 4"),
    (lambda: S.conv([2, 16, 12, 12], [32, 16, 3, 3], "float32", bias=True,
                    direction=CD.FORWARD | CD.BACKWARD_DATA | CD.BACKWARD_WEIGHT | CD.BACKWARD_BIAS),
     "conv -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -F 0 -b 1"),
    (lambda: S.conv([2, 16, 12, 12], [32, 16, 1, 1], "float16",
                    activation=boo.Activation(ActivationKind.LEAKY_RELU, alpha=0.2)),
     "convfp16 -n 2 -c 16 -H 12 -W 12 -k 32 -y 1 -x 1 -F 1 --activation leaky_relu:0.2"),
    (lambda: S.conv([2, 16, 12, 12], [32, 16, 1, 1], "float16", bias=True,
                    activation=boo.Activation(ActivationKind.CLAMP, lo=0, hi=6)),
     "convfp16 -n 2 -c 16 -H 12 -W 12 -k 32 -y 1 -x 1 -F 1 -b 1 --activation clamp:0:6"),
    (lambda: S.conv([2, 16, 12, 12], [32, 16, 3, 3], "float32", tf32=True, weight_layout="NHWC",
                    output_layout="NHWC"),
     "conv -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -F 1 --fp32-math tf32 --fil_layout NHWC --out_layout NHWC"),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "bfloat16", padding=1, input_layout="NHWC",
                    weight_layout="NHWC", bias=True, residual=True, activation=ActivationKind.RELU),
     "convbfp16 -n 8 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --residual 1 "
     "--in_layout NHWC --fil_layout NHWC --out_layout NHWC --activation relu"),
    (lambda: S.layer_norm([4, 8, 16], [8, 16], "float32", weight=True, bias=True),
     "layernorm -X 4x8x16 -o 1 -m 1 -F 1"),
    (lambda: S.layer_norm([4, 8, 16], [16], torch.bfloat16, weight=True, eps=1e-6),
     "layernormbfp16 -X 4x8x16 -o 2 -m 1 --bias 0 -e 1e-6"),
    (lambda: S.layer_norm([4, 8, 16], [16], "float16", direction=LD.BACKWARD_DATA | LD.BACKWARD_WEIGHT),
     "layernormfp16 -X 4x8x16 -o 2 -m 0 -F 6"),
    (lambda: S.layer_norm([3, 4, 5], [4, 5], "float32", weight=True, bias=True,
                          direction=LD.BACKWARD_DATA | LD.BACKWARD_WEIGHT | LD.BACKWARD_BIAS,
                          input_permutation=[1, 2, 0]),
     "layernorm -X 3x4x5 -o 1 -m 1 -F 14 --input-permutation 1 2 0"),
    (lambda: S.layer_norm([3, 4, 5], [5], "float32", input_permutation=[0, 1, 2]),
     "layernorm -X 3x4x5 -o 2"),
    (lambda: S.layer_norm([3, 4, 5], [5], "float32", use_aten=False),
     "layernorm -X 3x4x5 -o 2 --use-aten 0"),
    (lambda: S.rms_norm([4, 8, 16], [16], "bfloat16"),
     "t5layernormbfp16 -X 4x8x16 -m 5 -F 1"),
    (lambda: S.rms_norm([4, 8, 16], [8, 16], "float32", weight=False, direction=RD.BACKWARD_DATA),
     "t5layernorm -X 4x8x16 -o 1 -m 4 -F 2"),
    (lambda: S.rms_norm([4, 8, 16], [16], "float16", eps=1e-6,
                        direction=RD.FORWARD | RD.BACKWARD_DATA | RD.BACKWARD_WEIGHT),
     "t5layernormfp16 -X 4x8x16 -m 5 -F 0 -e 1e-6"),
    (lambda: S.batch_norm([8, 64, 56, 56], "bfloat16", layout="nhwc", save=True, running=True),
     "bnormbfp16 -n 8 -c 64 -H 56 -W 56 -m 1 -F 1 -s 1 -r 1 --layout NHWC --eps 1e-5 --momentum 0.1"),
    (lambda: S.batch_norm([4, 16, 3, 8, 8], torch.float32, pass_=BP.INFERENCE, running=True, eps=1e-3, momentum=1),
     "bnorm -n 4 -c 16 -D 3 -H 8 -W 8 -m 1 -F 2 -r 1"),
    (lambda: S.batch_norm([4, 16, 8, 8], "float16", mode=BM.PER_ACTIVATION, pass_=BP.BACKWARD, save=True,
                          mixed=True, eps=1e-3, momentum=1),
     "bnormfp16fp32 -n 4 -c 16 -H 8 -W 8 -m 0 -F 0 -b 1 -s 1"),
    (lambda: S.group_norm([2, 320, 64, 64], "float16", groups=32, layout="NHWC"),
     "groupnormfp16 -n 2 -c 320 -D 0 -H 64 -W 64 -g 32 -m 1 -F 1 --layout NHWC"),
    (lambda: S.group_norm([2, 8, 5, 6, 7], "float32", groups=4, eps=1e-6, affine=False,
                          direction=ND.BACKWARD_DATA),
     "groupnorm -n 2 -c 8 -D 5 -H 6 -W 7 -g 4 -e 1e-6 -m 0 -F 2"),
    (lambda: S.group_norm([3, 6, 10], torch.bfloat16, groups=3,
                          direction=ND.FORWARD | ND.BACKWARD_DATA | ND.BACKWARD_WEIGHT | ND.BACKWARD_BIAS),
     "groupnormbfp16 -n 3 -c 6 -D 0 -H 0 -W 10 -g 3 -m 1 -F 0"),
]

_CONSTRUCTORS = {"conv": S.conv, "layernorm": S.layer_norm, "rmsnorm": S.rms_norm, "batchnorm": S.batch_norm,
                 "batchnorm_mixed": S.batch_norm, "groupnorm": S.group_norm}


class TypedConstructorTest(unittest.TestCase):
    def assert_same(self, typed, parsed, what):
        self.assertEqual(typed, parsed, what)
        self.assertEqual(typed.command, parsed.command, what)  # the command keys the kernel cache
        self.assertEqual(typed.func_name, parsed.func_name, what)
        self.assertEqual(hash(typed), hash(parsed), what)

    def test_constructors_equal_their_commands(self):
        for build, command in EQUIVALENTS:
            with self.subTest(command=command):
                self.assert_same(build(), S.from_command(command), command)

    def test_fields_round_trip(self):
        # sig.fields are the constructor's keywords: rebuilding gives the signature back.
        for _, command in EQUIVALENTS:
            with self.subTest(command=command):
                parsed = S.from_command(command)
                self.assert_same(_CONSTRUCTORS[parsed.op_name](**parsed.fields), parsed, command)

    def test_fields_are_typed(self):
        f = S.from_command("convbfp16 -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -F 0 -b 1 --in_layout NHWC").fields
        self.assertIs(f["dtype"], boo.DType.bfloat16)
        self.assertEqual(f["input_shape"], [2, 16, 12, 12])
        self.assertEqual(f["weight_shape"], [32, 16, 3, 3])
        self.assertEqual(f["direction"], CD.FORWARD | CD.BACKWARD_DATA | CD.BACKWARD_WEIGHT | CD.BACKWARD_BIAS)
        self.assertEqual((f["input_layout"], f["weight_layout"], f["output_layout"]), ("NHWC", "NCHW", "NCHW"))
        self.assertEqual(f["activation"].kind, ActivationKind.NONE)

    def test_dtype_spellings(self):
        want = S.conv([1, 4, 5, 5], [4, 4, 1, 1], boo.DType.float16)
        for dtype in ("float16", "torch.float16", torch.float16):
            self.assertEqual(S.conv([1, 4, 5, 5], [4, 4, 1, 1], dtype), want, dtype)

    def test_ops_builders_use_the_constructors(self):
        # boo.ops' cached builders (what eager calls and the compile rewrite use) against commands.
        layouts = ("NHWC", "NHWC", "NHWC")
        fwd = ops.conv_signature((2, 16, 12, 12), (32, 16, 3, 3), torch.bfloat16, (1, 1), (1, 1), (1, 1), 1, True,
                                 "leaky_relu:0.1", layouts, "forward")
        self.assertEqual(fwd, S.from_command(
            "convbfp16 -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --in_layout NHWC "
            "--fil_layout NHWC --out_layout NHWC --activation leaky_relu:0.1"))
        # float32 follows torch.backends.cudnn.allow_tf32 (PyTorch's default: on) as PyTorch's convs do.
        allow_tf32 = torch.backends.cudnn.allow_tf32
        try:
            for tf32, math in ((True, " --fp32-math tf32"), (False, "")):
                torch.backends.cudnn.allow_tf32 = tf32
                bwd = ops.conv_signature((2, 16, 12, 12), (32, 16, 3, 3), torch.float32, (2, 2), (0, 0), (1, 1), 1,
                                         True, "none", ("NCHW",) * 3, frozenset(("input", "weight", "bias")))
                self.assertEqual(bwd, S.from_command("conv -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -u 2 -v 2 -F 6 -b 1"
                                                     + math))
                no_bias = ops.conv_signature((2, 16, 12, 12), (32, 16, 3, 3), torch.float32, (1, 1), (0, 0), (1, 1),
                                             1, False, "none", ("NCHW",) * 3, frozenset(("input", "bias")))
                self.assertEqual(no_bias, S.from_command("conv -n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -F 2" + math))
        finally:
            torch.backends.cudnn.allow_tf32 = allow_tf32
        # Autograd's gradients: one signature each, so each dispatches on its own (the Hopper tier plans one
        # direction at a time); the bias gradient only for a conv with a bias.
        per_gradient = ops.conv_backward_signatures((2, 16, 12, 12), (32, 16, 3, 3), torch.bfloat16, (1, 1), (1, 1),
                                                    (1, 1), 1, True, layouts, frozenset(("input", "weight", "bias")))
        shape = "-n 2 -c 16 -H 12 -W 12 -k 32 -y 3 -x 3 -p 1 -q 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC"
        self.assertEqual(per_gradient, [S.from_command(f"convbfp16 {shape} -F {code}") for code in (2, 4, 7)])
        self.assertEqual(ops.conv_backward_signatures((2, 16, 12, 12), (32, 16, 3, 3), torch.bfloat16, (1, 1), (1, 1),
                                                      (1, 1), 1, False, layouts, frozenset(("weight", "bias"))),
                         [S.from_command(f"convbfp16 {shape} -F 4")])
        ln = ops.layer_norm_signature((4, 8, 16), 1, torch.float16, True, False, 1e-5,
                                      LD.BACKWARD_DATA | LD.BACKWARD_WEIGHT)
        self.assertEqual(ln, S.from_command("layernormfp16 -X 4x8x16 -o 2 -m 1 --bias 0 -F 6"))
        rms = ops.rms_norm_signature((4, 8, 16), 2, torch.bfloat16, False, 1e-6, "backward")
        self.assertEqual(rms, S.from_command("t5layernormbfp16 -X 4x8x16 -o 1 -m 4 -F 2 -e 1e-6"))


# (a bad call, words its ValueError must contain)
BAD_FIELDS = [
    (lambda: S.conv([8, 64, 56, 56], [64, 32, 3, 3], "bfloat16"), ["weight_shape", "second dimension", "C = 64"]),
    (lambda: S.conv([2, 8, 9, 9], [4, 2, 3, 3], "float32", transposed=True, groups=2),
     ["transposed weight", "C = 8"]),
    (lambda: S.conv([8, 64], [64, 64], "float32"), ["input_shape", "3 to 5 dimensions"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3], "float32"), ["weight_shape", "rank"]),
    (lambda: S.conv([8, 64, 0, 56], [64, 64, 3, 3], "float32"), ["input_shape", "positive"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", stride=(1, 2, 3)), ["stride", "3 entries", "2-D"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", stride="2"), ["stride", "int"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", padding=[1, 1.5]), ["padding", "ints"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "int8"), ["dtype", "float32, float16 and bfloat16"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], torch.float64), ["dtype", "float64"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", input_layout="NHWX"), ["input_layout", "NHWX"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", weight_layout="NCDHW"), ["weight_layout"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", output_padding=1), ["output padding", "transposed"]),
    (lambda: S.conv([8, 60, 56, 56], [62, 15, 3, 3], "float32", groups=4), ["62", "divisible", "group"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", groups=0), ["groups", "positive"]),
    (lambda: S.conv([1, 4, 2, 2], [4, 4, 3, 3], "float32"), ["output size"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", bias=True,
                    direction=CD.FORWARD | CD.BACKWARD_DATA), ["bias", "BACKWARD_BIAS"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", direction=CD.BACKWARD_DATA,
                    activation=ActivationKind.RELU), ["activation", "forward"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", direction=1), ["direction", "ConvDirection"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", direction=LD.FORWARD), ["ConvDirection"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", activation="relu"), ["activation", "ActivationKind"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float32", activation=ActivationKind.CLAMP), ["bounds"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float16", tf32=True), ["tf32", "fp32"]),
    (lambda: S.conv([8, 64, 56, 56], [64, 64, 3, 3], "float16", residual=True,
                    direction=CD.FORWARD | CD.BACKWARD_DATA | CD.BACKWARD_WEIGHT), ["--residual", "-F 1"]),
    (lambda: boo.Activation(ActivationKind.CLAMP, lo=1.0), ["CLAMP", "lo and hi"]),
    (lambda: boo.Activation(ActivationKind.CLAMP, lo=6.0, hi=0.0), ["lo must not exceed hi"]),
    (lambda: boo.Activation(ActivationKind.RELU, alpha=0.2), ["alpha", "LEAKY_RELU"]),
    (lambda: S.layer_norm([4, 8], [4], "float32"), ["normalized_shape", "trailing dimensions"]),
    (lambda: S.layer_norm([4, 8], [], "float32"), ["normalized_shape"]),
    (lambda: S.layer_norm([4, 8], [8], "float32", bias=True), ["bias needs a weight"]),
    (lambda: S.layer_norm([4, 8], [8], "float32", eps=0.0), ["eps", "positive"]),
    # Forward with a backward is a mode only with every gradient (MIOpen's -F 0): here dweight is missing.
    (lambda: S.layer_norm([4, 8], [8], "float32", weight=True, direction=LD.FORWARD | LD.BACKWARD_DATA),
     ["not a mode"]),
    (lambda: S.layer_norm([4, 8], [8], "float32", input_permutation=[0, 0]), ["permutation"]),
    (lambda: S.rms_norm([4, 8], [8], "float32", direction=RD.BACKWARD_DATA), ["BACKWARD_WEIGHT with a weight"]),
    (lambda: S.rms_norm([4, 8], [8], "float32", weight=False, direction=RD.BACKWARD_WEIGHT),
     ["BACKWARD_DATA without a weight"]),
    (lambda: S.rms_norm([4, 8], [3, 8], "float32"), ["normalized_shape"]),
    (lambda: S.batch_norm([4, 8, 6], "float32"), ["input_shape", "4 or 5 dimensions"]),
    (lambda: S.batch_norm([4, 8, 0, 6], "float32"), ["input_shape", "positive"]),
    (lambda: S.batch_norm([4, 8, 6, 6], "float32", layout="NCDHW"), ["layout", "NCDHW"]),
    (lambda: S.batch_norm([4, 8, 6, 6], "float32", mixed=True), ["mixed", "float16 or bfloat16"]),
    (lambda: S.batch_norm([1, 8, 1, 1], "float32"), ["at least 2"]),
    (lambda: S.batch_norm([4, 8, 6, 6], "float32", momentum=1.5), ["momentum", "[0, 1]"]),
    (lambda: S.batch_norm([4, 8, 6, 6], "float32", eps=0.0), ["eps", "positive"]),
    (lambda: S.batch_norm([4, 8, 6, 6], "float64"), ["dtype", "float64"]),
    (lambda: S.group_norm([4, 8], "float32", groups=2), ["input_shape", "3 to 5 dimensions"]),
    (lambda: S.group_norm([4, 6, 5], "float32", groups=4), ["groups 4", "divide", "6 channels"]),
    (lambda: S.group_norm([4, 6, 5], "float32", groups=0), ["groups 0", "positive"]),
    (lambda: S.group_norm([4, 6, 5, 5], "float32", groups=2, layout="NWC"), ["layout", "NWC"]),
    (lambda: S.group_norm([4, 6, 5], "float32", groups=2, direction=ND.BACKWARD_DATA), ["not a mode"]),
    (lambda: S.group_norm([4, 6, 5], "float32", groups=2, direction=CD.FORWARD), ["NormDirection"]),
]


class BadFieldsTest(unittest.TestCase):
    def test_bad_fields_raise_clear_value_errors(self):
        for call, words in BAD_FIELDS:
            with self.subTest(words=words):
                with self.assertRaises(ValueError) as caught:
                    call()
                for word in words:
                    self.assertIn(word, str(caught.exception))


if __name__ == "__main__":
    unittest.main()
