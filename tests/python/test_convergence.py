"""Training with boo converges as training with PyTorch does: a small CNN (convs, batch norms, ReLUs, a
linear head) learns a fixed synthetic task (which quadrant of a noisy image holds a bright square) for a few
hundred SGD steps twice from the same initial weights and batches, once as eager PyTorch and once with its
modules swapped for boo's (boo.replace_modules: boo's conv and batch norm kernels and their backward ones),
and the two must reach the same accuracy on held-out images. On the GPU it runs in float32 and under bfloat16
autocast; on the CPU (CI) boo's ops are the float64 reference, in float32.

Run as: python3 tests/python/test_convergence.py [cpu|cuda]
"""
import copy
import os
import sys
import unittest

try:
    import torch
    import torch.nn as nn

    import boo
except ImportError as e:
    sys.exit(f"{e.name} is not installed for {sys.executable}: run scripts/test.sh (it installs PyTorch from "
             "requirements-dev.txt and boo with `pip install .`)")

DEVICE = sys.argv.pop(1) if len(sys.argv) > 1 and sys.argv[1] in ("cpu", "cuda") else os.environ.get(
    "BOO_TEST_DEVICE", "cpu")
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False

CLASSES, SIZE = 4, 16


def quadrant_images(count, generator):
    """`count` noisy SIZE x SIZE images, each with a bright 4 x 4 square in one quadrant (its label)."""
    x = torch.randn(count, 3, SIZE, SIZE, generator=generator) * 0.5
    labels = torch.randint(0, CLASSES, (count,), generator=generator)
    offsets = torch.randint(0, SIZE // 2 - 4 + 1, (count, 2), generator=generator)
    for i in range(count):
        top = (labels[i] // 2) * (SIZE // 2) + offsets[i, 0]
        left = (labels[i] % 2) * (SIZE // 2) + offsets[i, 1]
        x[i, :, top:top + 4, left:left + 4] += 2.0
    return x, labels


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(32 * 4, CLASSES)

    def forward(self, x):
        # Per-quadrant pooling keeps where the square was.
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 2), 1))


def train_and_score(model, batches, test, autocast_dtype):
    """SGD over `batches`; the accuracy on `test` (eval mode) afterwards."""
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    for x, labels in batches:
        with torch.autocast(DEVICE, dtype=autocast_dtype or torch.bfloat16, enabled=autocast_dtype is not None):
            loss = nn.functional.cross_entropy(model(x), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    model.eval()
    x, labels = test
    with torch.no_grad(), torch.autocast(DEVICE, dtype=autocast_dtype or torch.bfloat16,
                                         enabled=autocast_dtype is not None):
        predicted = model(x).argmax(1)
    return (predicted == labels).float().mean().item()


class ConvergenceTest(unittest.TestCase):
    def test_boo_trains_to_eager_pytorchs_accuracy(self):
        steps = 300 if DEVICE == "cuda" else 120
        generator = torch.Generator().manual_seed(0)
        batches = [tuple(t.to(DEVICE) for t in quadrant_images(32, generator)) for _ in range(steps)]
        test = tuple(t.to(DEVICE) for t in quadrant_images(512, generator))
        dtypes = [None, torch.bfloat16] if DEVICE == "cuda" else [None]
        for dtype in dtypes:
            with self.subTest(autocast=str(dtype)):
                torch.manual_seed(1)
                eager = SmallCnn().to(DEVICE)
                with_boo = boo.replace_modules(copy.deepcopy(eager))
                swapped = [m for m in with_boo.modules() if type(m).__module__.startswith("boo")]
                self.assertEqual(len(swapped), 5, "three convs and two batch norms run on boo")
                eager_accuracy = train_and_score(eager, batches, test, dtype)
                boo_accuracy = train_and_score(with_boo, batches, test, dtype)
                print(f"{DEVICE} autocast={dtype}: accuracy eager {eager_accuracy:.3f}, boo {boo_accuracy:.3f}")
                # The task is learnable (chance is 0.25) and both learn it alike.
                self.assertGreater(eager_accuracy, 0.9)
                self.assertGreater(boo_accuracy, 0.9)
                self.assertLess(abs(boo_accuracy - eager_accuracy), 0.05)


if __name__ == "__main__":
    from cuda_or_skip import cuda_or_skip
    cuda_or_skip(DEVICE)
    unittest.main()
