"""cuDNN twin of bench_conv: the same cases (bench/conv_cases.txt, the full set) through
torch.nn.functional.conv{1,2}d / conv_transpose{1,2}d, fp32 with TF32 off, CUDA events, median of
repeats; same columns (GFLOP/s counts the dense multiply-adds, GB/s X read + Y written once).
For windowed-identity weights it also times the overlap-add as PyTorch itself does it in
torch.istft: scale the frames by the window, then fold (col2im).

    python3 bench/torch_conv.py [--quick] [--repeats R] [--only SUBSTRING]
"""
import argparse
import functools
import math
import os

import torch
import torch.nn.functional as F

from cuda_timing import median_ms

parser = argparse.ArgumentParser()
parser.add_argument("--repeats", type=int, default=20)
parser.add_argument("--only", default="")
parser.add_argument("--quick", action="store_true", help="the tiny cases instead of the full set")
parser.add_argument("--cases", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_cases.txt"))
args = parser.parse_args()
median_ms = functools.partial(median_ms, repeats=args.repeats)
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest algorithm per shape (warm-up runs it)


def parse(line):
    f = line.split()
    ints = lambda s, sep: [int(v) for v in s.split(sep)]
    return dict(set=f[0], name=f[1], op=f[2], x=ints(f[3], "x"), w=ints(f[4], "x"), strides=ints(f[5], ","),
                pads=ints(f[6], ","), dilations=ints(f[7], ","), group=int(f[8]), weight=f[9], bias=f[10] == "bias")


def out_size(c, d):
    i, k, s, dl = c["x"][2 + d], c["w"][2 + d], c["strides"][d], c["dilations"][d]
    rank = len(c["x"]) - 2
    pb, pe = c["pads"][d], c["pads"][rank + d]
    if c["op"] == "conv":
        return (i + pb + pe - dl * (k - 1) - 1) // s + 1
    return s * (i - 1) + dl * (k - 1) + 1 - pb - pe


def run_case(c):
    rank = len(c["x"]) - 2
    x = torch.randn(*c["x"], device="cuda")
    fan_in = math.prod(c["w"][1:])
    if c["weight"] == "identity":
        n = c["w"][0]
        window = torch.hann_window(n, periodic=True, device="cuda")
        w = torch.zeros(*c["w"], device="cuda")
        w[torch.arange(n), 0, torch.arange(n)] = window
    else:
        w = (torch.rand(*c["w"], device="cuda") * 2 - 1) / math.sqrt(fan_in)
    out_channels = c["w"][0] if c["op"] == "conv" else c["w"][1] * c["group"]
    b = torch.randn(out_channels, device="cuda") * 0.1 if c["bias"] else None
    pads_begin, pads_end = c["pads"][:rank], c["pads"][rank:]
    symmetric = pads_begin == pads_end
    if c["op"] == "conv":
        fn = F.conv1d if rank == 1 else F.conv2d
        if symmetric:
            run = lambda: fn(x, w, b, c["strides"], pads_begin, c["dilations"], c["group"])
        else:  # asymmetric pads: pad the input (F.pad takes the last dimension first)
            pad = [p for d in reversed(range(rank)) for p in (pads_begin[d], pads_end[d])]
            run = lambda: fn(F.pad(x, pad), w, b, c["strides"], 0, c["dilations"], c["group"])
    else:
        fn = F.conv_transpose1d if rank == 1 else F.conv_transpose2d
        if symmetric:
            run = lambda: fn(x, w, b, c["strides"], pads_begin, 0, c["group"], c["dilations"])
        else:  # asymmetric pads: crop the unpadded output
            sl = tuple([slice(None), slice(None)] + [slice(pads_begin[d], pads_begin[d] + out_size(c, d))
                                                     for d in range(rank)])
            run = lambda: fn(x, w, b, c["strides"], 0, 0, c["group"], c["dilations"])[sl]
    y = run()
    expected = [c["x"][0], out_channels] + [out_size(c, d) for d in range(rank)]
    assert list(y.shape) == expected, f"{c['name']}: torch gives {list(y.shape)}, expected {expected}"
    taps = math.prod(c["w"][2:])
    if c["op"] == "conv":
        flops = 2 * math.prod(expected) * (c["w"][1]) * taps
    else:
        flops = 2 * math.prod(c["x"]) * c["w"][1] * taps
    nbytes = 4 * (math.prod(c["x"]) + math.prod(expected))
    lines = []
    ms = median_ms(run)
    lines.append(("cudnn", ms))
    if c["weight"] == "identity" and rank == 1 and c["strides"][0] < c["w"][0]:
        # torch.istft's own overlap-add: window the frames, then fold them (col2im) with the hop.
        n, s, frames = c["w"][0], c["strides"][0], c["x"][2]
        length = (frames - 1) * s + n
        diag = window.view(1, n, 1)
        fold = lambda: F.fold(x * diag, output_size=(1, length), kernel_size=(1, n), stride=(1, s))
        ref = fn(x, w, None, c["strides"], 0)
        err = ((fold().view_as(ref) - ref).norm() / ref.norm()).item()
        assert err < 1e-5, f"fold differs from conv_transpose1d: {err}"
        lines.append(("torch fold (istft)", median_ms(fold)))
    for path, t in lines:
        print(f"{c['name']:<40} {path:<24} {t:>10.4f} {flops / (t * 1e-3) / 1e9:>10.1f} "
              f"{nbytes / (t * 1e-3) / 1e9:>10.1f}", flush=True)


print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, cuDNN {torch.backends.cudnn.version()}, "
      f"fp32, TF32 off, repeats {args.repeats}")
print(f"{'case':<40} {'path':<24} {'ms':>10} {'GFLOP/s':>10} {'GB/s':>10}")
with open(args.cases) as f:
    for line in f:
        if not line.strip() or line.startswith("#"):
            continue
        c = parse(line)
        if c["set"] != ("quick" if args.quick else "full") or args.only not in c["name"]:
            continue
        try:
            run_case(c)
        except Exception as e:  # report and go on with the next case
            print(f"{c['name']:<40} {'cudnn':<24} failed: {e}", flush=True)
