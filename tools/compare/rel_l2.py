"""rel L2 = ||a - b|| / ||b|| of each .npy in DIR_A against the same name in DIR_B.

    python3 tools/compare/rel_l2.py onda_out/ ort_out/
"""
import os
import sys

import numpy as np

a_dir, b_dir = sys.argv[1], sys.argv[2]
worst = 0.0
for name in sorted(os.listdir(b_dir)):
    if not name.endswith(".npy"):
        continue
    a = np.load(os.path.join(a_dir, name)).astype(np.float64)
    b = np.load(os.path.join(b_dir, name)).astype(np.float64)
    e = np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300) if a.shape == b.shape else float("inf")
    worst = max(worst, e)
    print(f"{name}: shape {a.shape}, rel L2 {e:.2e}")
print(f"worst rel L2 {worst:.2e}")
