"""cuFFT twin of bench_fft (same cases, torch.fft on CUDA, CUDA events, median of repeats).

    python3 bench/torch_fft.py [--points LOG2]
"""
import argparse
import functools

import torch

from cuda_timing import median_ms

parser = argparse.ArgumentParser()
parser.add_argument("--points", type=int, default=26)
parser.add_argument("--repeats", type=int, default=20)
args = parser.parse_args()
median_ms = functools.partial(median_ms, repeats=args.repeats)
points = 1 << args.points


print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, {points} points per batch")
print(f"{'case':<34} {'ms':>10} {'GB/s':>10}")
for n in (256, 512, 1024, 2048, 4096, 16384, 1 << 20, 4099, 65537):
    batch = max(points // n, 1)
    x = torch.randn(batch, n, dtype=torch.complex64, device="cuda")
    ms = median_ms(lambda: torch.fft.fft(x))
    print(f"{f'c2c N={n} x{batch}':<34} {ms:>10.4f} {16 * batch * n / (ms * 1e-3) / 1e9:>10.1f}")
    if n in (4099, 65537):
        continue
    r = torch.randn(batch, n, device="cuda")
    ms = median_ms(lambda: torch.fft.rfft(r))
    print(f"{f'r2c N={n} x{batch}':<34} {ms:>10.4f} {4 * batch * (n + 2 * (n // 2 + 1)) / (ms * 1e-3) / 1e9:>10.1f}")
signal = torch.randn(2, 343980, device="cuda")
window = torch.hann_window(4096, device="cuda")
ms = median_ms(lambda: torch.stft(signal, 4096, 1024, window=window, center=True, return_complex=True))
print(f"{'HTDemucs STFT (torch.stft, center)':<34} {ms:>10.4f}")
