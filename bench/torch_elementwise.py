"""PyTorch-on-CUDA twin of bench_elementwise: same ops, same size, CUDA events, median of repeats.

    python3 bench/torch_elementwise.py [--mib N] [--repeats R]
"""
import argparse
import functools

import torch

from cuda_timing import median_ms

parser = argparse.ArgumentParser()
parser.add_argument("--mib", type=int, default=1024)
parser.add_argument("--repeats", type=int, default=20)
args = parser.parse_args()
median_ms = functools.partial(median_ms, repeats=args.repeats)
n = (args.mib << 20) // 4
a = torch.randn(n, device="cuda")
b = torch.randn(n, device="cuda")
y = torch.empty_like(a)


print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, tensor {args.mib} MiB ({n} float32)")
copy = median_ms(lambda: y.copy_(a))
copy_gbs = 2 * 4 * n / (copy * 1e-3) / 1e9
print(f"{'op':<28} {'ms':>10} {'GB/s':>10} {'of copy':>9}")
print(f"{'copy (y.copy_(a))':<28} {copy:>10.3f} {copy_gbs:>10.1f} {100:>8.0f}%")
cases = [
    ("Relu", 1, lambda: torch.relu(a, out=y) if False else torch.clamp_min(a, 0, out=y)),
    ("Sigmoid", 1, lambda: torch.sigmoid(a, out=y)),
    ("Gelu", 1, lambda: y.copy_(torch.nn.functional.gelu(a))),
    ("Add", 2, lambda: torch.add(a, b, out=y)),
    ("Mul", 2, lambda: torch.mul(a, b, out=y)),
]
for name, inputs, fn in cases:
    ms = median_ms(fn)
    gbs = 4 * n * (inputs + 1) / (ms * 1e-3) / 1e9
    print(f"{name + ' f32':<28} {ms:>10.3f} {gbs:>10.1f} {100 * gbs / copy_gbs:>8.0f}%")
