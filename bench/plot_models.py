"""Plots the end-to-end model benchmark (bench/models.py's results.json) as a bar chart per model:
onda next to ONNX Runtime WebGPU / CPU and PyTorch on CUDA, milliseconds on a log scale.

    python3 bench/plot_models.py RESULTS.json docs/models.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results = json.load(open(sys.argv[1]))
out = sys.argv[2] if len(sys.argv) > 2 else "docs/models.png"
series = [("onda (WebGPU)", "median_ms", "#1b7837"), ("ONNX Runtime WebGPU" + (" (issue figure)" if "ORT WebGPU and PyTorch CUDA are issue" in results.get("note", "") else " 1.30"), "ort_webgpu_ms", "#762a83"),
          ("ONNX Runtime CPU (16 threads)", "ort_cpu_ms", "#999999"), ("PyTorch CUDA (issue figure)", "pytorch_cuda_ms", "#2166ac")]
models = [r for r in results["models"] if not r.get("failed")]
fig, ax = plt.subplots(figsize=(9, 4.5))
width = 0.8 / len(series)
for i, (label, key, color) in enumerate(series):
    xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(models))]
    ys = [r.get(key) or 0 for r in models]
    bars = ax.bar(xs, ys, width, label=label, color=color)
    for b, y in zip(bars, ys):
        if y:
            ax.text(b.get_x() + b.get_width() / 2, y * 1.08, f"{y:.0f}" if y >= 10 else f"{y:.1f}", ha="center",
                    va="bottom", fontsize=7)
ax.set_yscale("log")
ax.set_xticks(range(len(models)))
ax.set_xticklabels([r["model"] for r in models])
ax.set_ylabel("ms per run (log scale, lower is better)")
ax.set_title(f"Whole-model inference, {results['gpu']}, f32, batch 1 ({results['date']}, commit {results['commit']})",
             fontsize=9)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=120)
print(f"wrote {out}")
