"""cuBLAS twin of the GEMM benchmark (GemmBench in tests/test_gemm_bench.cpp): torch.matmul with
TF32 off (fp32) and fp16, CUDA events, median of repeats.

    python3 bench/torch_matmul.py
"""
import torch

from cuda_timing import median_ms

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


print(f"torch {torch.__version__} on {torch.cuda.get_device_name()} (TF32 off)")
print(f"{'shape (M, N, K)':<24} {'dtype':<8} {'ms':>9} {'TFLOP/s':>9}")
shapes = [(4096, 4096, 4096), (16384, 512, 512), (1024, 1024, 1024)] + [(m, 2048, 512) for m in (1, 4, 16, 64)]
for dtype in (torch.float32, torch.float16):
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        ms = median_ms(lambda: torch.matmul(a, b))
        print(f"{str((m, n, k)):<24} {str(dtype).split('.')[-1]:<8} {ms:>9.4f} {2 * m * n * k / (ms * 1e-3) / 1e12:>9.2f}")
