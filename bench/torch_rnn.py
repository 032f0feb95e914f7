"""cuDNN twin of bench_rnn (the shapes of bench/rnn_cases.h through torch.nn.LSTM / GRU, float32,
CUDA events, median of repeats), plus PyTorch's launch floor: a chain of dependent tiny kernels.

    python3 bench/torch_rnn.py [--quick] [--repeats R] [--only SUBSTRING] [--case CELL,DIRS,T,B,I,H ...]

--case (repeatable, as bench_rnn's) times the given shapes instead: CELL lstm | gru, DIRS uni | bi.

torch.nn.GRU is linear_before_reset=1 only, so the lbr=0 case is skipped here.
"""
import argparse
import functools

import torch

from cuda_timing import median_ms

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true")
parser.add_argument("--repeats", type=int, default=10)
parser.add_argument("--only", default="", help="only the cases whose name contains this")
parser.add_argument("--case", action="append", default=[], help="CELL,DIRS,T,B,I,H instead of the list")
args = parser.parse_args()
median_ms = functools.partial(median_ms, repeats=args.repeats)

# name, lstm, linear_before_reset, bidirectional, T, B, I, H: keep in step with bench/rnn_cases.h.
CASES = [
    ("mpsenet-freq biGRU", False, True, True, 321, 101, 64, 128),
    ("mpsenet-time biGRU", False, True, True, 101, 321, 64, 128),
    ("issue biGRU T321 B201", False, True, True, 321, 201, 64, 128),
    ("mpsenet-freq biGRU lbr=0", False, False, True, 321, 101, 64, 128),
    ("biLSTM H128 T512 B64", True, False, True, 512, 64, 128, 128),
    ("biLSTM H256 T1000 B2", True, False, True, 1000, 2, 256, 256),
    ("LSTM H512 T4096 B1", True, False, False, 4096, 1, 512, 512),
    ("scnet H256 freq biLSTM", True, False, True, 85, 864, 256, 256),
    ("scnet H256 time biLSTM", True, False, True, 864, 85, 256, 256),
    ("scnet H512 freq biLSTM", True, False, True, 85, 433, 512, 512),
    ("scnet H512 time biLSTM", True, False, True, 433, 85, 512, 512),
    ("uvr H64 I168 biLSTM", True, False, True, 256, 1, 168, 64),
    ("uvr H32 I168 biLSTM", True, False, True, 256, 1, 168, 32),
    ("uvr H64 I336 biLSTM", True, False, True, 256, 1, 336, 64),
]



def parse_case(spec):
    f = spec.split(",")
    if len(f) != 6 or f[0] not in ("lstm", "gru", "gru0") or f[1] not in ("uni", "bi") or not all(
            v.isdigit() and int(v) > 0 for v in f[2:]):
        parser.error(f"--case '{spec}': expected CELL,DIRS,T,B,I,H with CELL lstm | gru | gru0 and DIRS uni | bi")
    T, B, I, H = (int(v) for v in f[2:])
    name = f"{f[0]} {f[1]} T{T} B{B} I{I} H{H}"  # bench_rnn's name for the same case
    return (name, f[0] == "lstm", f[0] == "gru", f[1] == "bi", T, B, I, H)


if args.case:
    CASES = [parse_case(spec) for spec in args.case]

torch.backends.cudnn.enabled = True
print(f"torch {torch.__version__} cuDNN {torch.backends.cudnn.version()} on {torch.cuda.get_device_name()}")

steps = 64 if args.quick else 2000
word = torch.zeros(1, device="cuda")


def chain():
    for _ in range(steps):
        word.add_(1)


print(f"launch floor: {median_ms(chain) * 1e3 / steps:.2f} us per dependent kernel ({steps} in a row)\n")
# cuDNN's RNNs may run float32 on the tensor cores as TF32 when allowed (PyTorch's default): time
# both, the strict float32 column is the like-for-like one for onda's float32 kernels.
print(f"{'case':<26} {'T':>5} {'B':>4} {'I':>4} {'H':>4} {'ms':>9} {'us/step':>8} {'ms no TF32':>11}")
with torch.no_grad():
    for name, lstm, lbr, bidirectional, T, B, I, H in CASES:
        if (not lbr and not lstm) or args.only not in name:
            continue
        if args.quick and not args.case:  # --case shapes stay as given, as in bench_rnn
            T, B, I, H = min(T, 12), min(B, 5), min(I, 48), min(H, 72)
        cls = torch.nn.LSTM if lstm else torch.nn.GRU
        layer = cls(I, H, bidirectional=bidirectional).cuda().eval()
        x = torch.randn(T, B, I, device="cuda")
        torch.backends.cudnn.allow_tf32 = True
        ms = median_ms(lambda: layer(x))
        torch.backends.cudnn.allow_tf32 = False
        strict = median_ms(lambda: layer(x))
        print(f"{name:<26} {T:>5} {B:>4} {I:>4} {H:>4} {ms:>9.3f} {ms * 1e3 / T:>8.2f} {strict:>11.3f}")
