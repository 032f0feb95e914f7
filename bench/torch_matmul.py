"""cuBLAS twin of the GEMM benchmark (GemmBench in bench/gemm_bench.cpp, build/bench_gemm): torch.matmul with
TF32 off (fp32) and fp16, CUDA events, median of repeats.

    python3 bench/torch_matmul.py

Shapes: GemmBench.TileSweep / SkinnySweep (row-major B, and B^T for the big square and M = 16384),
GemmBench.TuningSweep's shapes (B row-major and B^T, i.e. x @ W^T as nn.Linear runs it), and GemmBench.AttentionShapes (batched [batch, M, K] x [batch, K, N], row-major B as the models'
softmax(QK^T) V and Q K^T after their transposes are materialized).
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

# B^T (torch.matmul on a transposed view: cuBLAS's TN/NT kernels) for the layout comparison.
for m, n, k in [(4096, 4096, 4096), (16384, 512, 512)]:
    a = torch.randn(m, k, device="cuda")
    bt = torch.randn(n, k, device="cuda")
    ms = median_ms(lambda: torch.matmul(a, bt.t()))
    print(f"{str((m, n, k)) + ' B^T':<24} {'float32':<8} {ms:>9.4f} {2 * m * n * k / (ms * 1e-3) / 1e12:>9.2f}")

print()
print("GemmBench.TuningSweep shapes, float32 (cuBLAS, TF32 off)")
print(f"{'shape (M, N, K)':<24} {'B':>9} {'TFLOP/s':>9} {'B^T':>9} {'TFLOP/s':>9}")
for m, n, k in [(4096, 4096, 4096), (49662, 2048, 512), (49662, 512, 2048), (16384, 512, 512), (16384, 256, 2304),
                (65536, 128, 576)]:
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    bt = torch.randn(n, k, device="cuda")
    ms_b = median_ms(lambda: torch.matmul(a, b))
    ms_bt = median_ms(lambda: torch.matmul(a, bt.t()))
    tf = lambda ms: 2 * m * n * k / (ms * 1e-3) / 1e12
    print(f"{str((m, n, k)):<24} {ms_b:>9.4f} {tf(ms_b):>9.2f} {ms_bt:>9.4f} {tf(ms_bt):>9.2f}")
    del a, b, bt

print()
print(f"{'attention (batch, M, N, K)':<44} {'ms':>9} {'TFLOP/s':>9}")
attention = [
    ("mpsenet freq AV", 404, 321, 16, 321),
    ("mpsenet freq QK", 404, 321, 321, 16),
    ("mpsenet time AV", 1284, 101, 16, 101),
    ("mpsenet time QK", 1284, 101, 101, 16),
    ("htdemucs AV", 8, 2688, 64, 2688),
    ("htdemucs QK", 8, 2688, 2688, 64),
]
for name, batch, m, n, k in attention:
    a = torch.randn(batch, m, k, device="cuda")
    b = torch.randn(batch, k, n, device="cuda")
    ms = median_ms(lambda: torch.matmul(a, b))
    label = f"{name} {(batch, m, n, k)}"
    print(f"{label:<44} {ms:>9.4f} {2 * batch * m * n * k / (ms * 1e-3) / 1e12:>9.2f}")
