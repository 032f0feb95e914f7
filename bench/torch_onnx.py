"""PyTorch eager peer of `onda run --bench` for a whole model (issue 33): the model's ONNX graph run
node by node as the matching torch ops (cuDNN convolutions and recurrent layers, cuBLAS products,
cuFFT transforms), under torch.inference_mode(), fp32 with TF32 off, every intermediate dropped
after its last reader as an eager PyTorch model drops its temporaries. The repository does not carry
the models' original PyTorch code; this runs their exported graphs the way that code would run.

Per model it prints the median ms of --runs timed runs after --warmup (CUDA events,
bench/cuda_timing.py) and `torch.cuda.max_memory_allocated()` of one run after
`torch.cuda.reset_peak_memory_stats()`, weights and inputs included (the line also gives what is
resident before the run: weights + inputs), in MiB as `onda run --bench` prints its peak. With
--reference DIR (or --ort) it checks its outputs against ONNX Runtime's (rel L2).

    python3 bench/torch_onnx.py [--models-dir models] [--device cuda|cpu] [--runs 20] [--warmup 3]
        [--reference DIR] [--ort] [--save DIR] [--profile] [--cudnn-benchmark] NAME|PATH.onnx ...

On the GPU machine: scripts/gpu/measure.sh's `torch` step (next to `onda run --bench`). Here, the
executor's own check (Debian's python3-torch, CPU): --device cpu --runs 0 --reference
build/model-check (the ORT outputs tests/models/model_matches_ort.sh leaves there).

Inputs follow the models README and tests/models/model_matches_ort.sh (numpy default_rng(0) per
model, in graph-input order): waveforms 0.1*N(0,1), the VR magnitude |N(0,1)|, MP-SENet magnitude
|N(0,1)|^0.3 and phase U(-pi, pi); so --reference can name that script's ort/ folder.

How the graph runs. The first run (warm-up, under torch.no_grad) prepares: every node whose inputs
are all constants (initializers, Constant, Shape of a tensor whose shape is now known, and what is
computed from those) is evaluated once on the host and kept; this is the shape arithmetic an eager
model does in Python, plus the exporter's constant subgraphs (rotary tables, weight transposes).
Constants that device nodes read are uploaded once and stay resident (the model's weights); LSTM
and GRU weights go into torch.nn.LSTM / GRU modules (cuDNN's flattened weights). Later runs execute
only the device nodes. Inputs that an op reads as numbers (Reshape's shape, Slice's starts, Pad's
pads...) are read on the host (HOST_INPUTS); a device value there would cost a synchronisation, and
the preparation reports it.

Where the ONNX form costs PyTorch more than the original module would (complex tensors as [..., 2]
real pairs around DFT/STFT, an LSTM's output re-laid out to ONNX's [seq, dirs, batch, hidden], no
in-place activations), this peer pays it as ONNX Runtime and onda do: it is the same graph. So its
peak is an upper estimate of the original module's; how close its times come to the original
implementations' (issue 33: MP-SENet 22.5, UVR 25, HTDemucs 59, SCNet 376 ms on an H200, BS-RoFormer
267 and MDX23C 571 ms on an H100) the GPU call shows.
"""
import argparse
import math
import os
import re
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper

from model_inputs import make_input

# ---------------------------------------------------------------------------------------------------
# Graph


class Node:
    """One ONNX node: op type, input and output names ('' = absent), attributes as Python values."""

    def __init__(self, proto, index):
        self.index = index
        self.op = proto.op_type
        self.name = proto.name or f"{proto.op_type}_{index}"
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.attrs = {}
        for a in proto.attribute:
            v = helper.get_attribute_value(a)
            if isinstance(v, bytes):
                v = v.decode()
            elif isinstance(v, onnx.TensorProto):
                v = torch.from_numpy(numpy_helper.to_array(v).copy())
            self.attrs[a.name] = v
        if proto.domain not in ("", "ai.onnx"):
            raise SystemExit(f"{self.describe()}: domain '{proto.domain}' not supported")

    def describe(self):
        return f"node '{self.name}' ({self.op})"


def load_graph(path):
    model = onnx.load(path)  # external weights from the .onnx file's folder
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 13 or opset > 17:
        print(f"{path}: opset {opset}; this executor follows opset 13-17 semantics", file=sys.stderr)
    g = model.graph
    consts = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in g.initializer}
    inputs = [(i.name, [d.dim_value if d.HasField("dim_value") else 1 for d in i.type.tensor_type.shape.dim])
              for i in g.input if i.name not in consts]
    for n in g.node:
        if n.op_type in ("If", "Loop", "Scan"):
            raise SystemExit(f"{path}: control flow ({n.op_type}) not supported")
    return [Node(n, i) for i, n in enumerate(g.node)], consts, inputs, [o.name for o in g.output]


# ---------------------------------------------------------------------------------------------------
# Ops: op_type -> fn(node, inputs) -> output tensor or tuple of them. Absent optional inputs are None.
# The indices in HOST_INPUTS are read as numbers on the host (CPU tensors).


def ints(t):
    return [int(v) for v in t.reshape(-1).tolist()]


def opt(xs, i):
    """Optional input i: None where absent ('' or past the end)."""
    return xs[i] if i < len(xs) else None


def axis_of(x, a):
    return a + x.dim() if a < 0 else a


def elementwise(fn):
    return lambda n, xs: fn(*xs)


def div(a, b):
    if a.is_floating_point():
        return a / b
    return torch.div(a, b, rounding_mode="trunc")  # ONNX integer Div truncates


def mod(n, xs):
    a, b = xs
    return torch.fmod(a, b) if n.attrs.get("fmod", 0) else torch.remainder(a, b)


DTYPES = {1: torch.float32, 6: torch.int32, 7: torch.int64, 9: torch.bool, 11: torch.float64}


def cast(n, xs):
    to = n.attrs["to"]
    if to not in DTYPES:
        raise SystemExit(f"{n.describe()}: Cast to ONNX type {to} not supported")
    return xs[0].to(DTYPES[to])


def shape(n, xs):
    s = list(xs[0].shape)
    start, end = n.attrs.get("start", 0), n.attrs.get("end", len(s))
    return torch.tensor(s[start:end], dtype=torch.int64)


def constant(n, xs):
    if "value" not in n.attrs:
        raise SystemExit(f"{n.describe()}: only the 'value' attribute is supported")
    return n.attrs["value"]


def constant_of_shape(n, xs):
    v = n.attrs.get("value", torch.zeros(1))
    return torch.full(ints(xs[0]), v.reshape(-1)[0].item(), dtype=v.dtype)


def gather(n, xs):
    x, idx = xs
    axis = axis_of(x, n.attrs.get("axis", 0))
    if not idx.is_cuda and idx.dim() == 0:
        i = int(idx)
        return x.select(axis, i + x.shape[axis] if i < 0 else i)
    idx = torch.where(idx < 0, idx + x.shape[axis], idx)
    return x[(slice(None),) * axis + (idx,)]


def unsqueeze(n, xs):
    x = xs[0]
    rank = x.dim() + len(ints(xs[1]))
    for a in sorted(a + rank if a < 0 else a for a in ints(xs[1])):
        x = x.unsqueeze(a)
    return x


def squeeze(n, xs):
    x = xs[0]
    if opt(xs, 1) is None:
        return x.squeeze()
    for a in sorted((axis_of(x, a) for a in ints(xs[1])), reverse=True):
        x = x.squeeze(a)
    return x


def reshape(n, xs):
    x, s = xs[0], ints(xs[1])
    if not n.attrs.get("allowzero", 0):
        s = [x.shape[i] if v == 0 else v for i, v in enumerate(s)]
    return x.reshape(s)


def transpose(n, xs):
    return xs[0].permute(n.attrs.get("perm", list(reversed(range(xs[0].dim())))))  # a view, as in eager code


def slice_(n, xs):
    x, starts, ends = xs[0], ints(xs[1]), ints(xs[2])
    axes = ints(opt(xs, 3)) if opt(xs, 3) is not None else list(range(len(starts)))
    steps = ints(opt(xs, 4)) if opt(xs, 4) is not None else [1] * len(starts)
    index = [slice(None)] * x.dim()
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = axis_of(x, a)
        size = x.shape[a]
        if st > 0:
            s = min(max(s + size if s < 0 else s, 0), size)
            e = min(max(e + size if e < 0 else e, 0), size)
            index[a] = slice(s, max(s, e), st)
        else:  # torch has no negative-step slicing: gather the indices
            s = min(max(s + size if s < 0 else s, 0), size - 1)
            e = min(max(e + size if e < 0 else e, -1), size - 1)
            x = x.index_select(a, torch.arange(s, e, st, device=x.device))
    return x[tuple(index)]


def split(n, xs):
    x = xs[0]
    axis = axis_of(x, n.attrs.get("axis", 0))
    sizes = ints(xs[1]) if opt(xs, 1) is not None else n.attrs.get("split")
    if sizes is None:
        count = len(n.outputs)
        sizes = [math.ceil(x.shape[axis] / count)] * count
    return tuple(torch.split(x, sizes, axis))


def concat(n, xs):
    return torch.cat([x for x in xs if x is not None], n.attrs["axis"])


def expand(n, xs):
    x = xs[0]
    return x.expand(torch.broadcast_shapes(tuple(x.shape), tuple(ints(xs[1]))))


def pad(n, xs):
    x, pads = xs[0], ints(xs[1])
    mode = n.attrs.get("mode", "constant")
    rank = x.dim()
    if opt(xs, 3) is not None:
        raise SystemExit(f"{n.describe()}: Pad's axes input not supported")
    begin, end = pads[:rank], pads[rank:]
    padded = [d for d in range(rank) if begin[d] or end[d]]
    if not padded:
        return x
    first = padded[0]
    torch_pads = []
    for d in reversed(range(first, rank)):
        torch_pads += [begin[d], end[d]]
    if mode == "constant":
        value = float(xs[2].reshape(-1)[0]) if opt(xs, 2) is not None and xs[2].numel() else 0.0
        return F.pad(x, torch_pads, value=value)
    # reflect / replicate pad the last 1-3 dims of a [N, C, ...] tensor: fold the others into C.
    k = rank - first
    if k > 3:
        raise SystemExit(f"{n.describe()}: {mode} padding of {k} dims not supported")
    folded = x.reshape((1, -1) + tuple(x.shape[first:]))
    y = F.pad(folded, torch_pads, mode={"edge": "replicate", "reflect": "reflect"}[mode])
    return y.reshape(tuple(x.shape[:first]) + tuple(y.shape[2:]))


def tile(n, xs):
    return xs[0].repeat(ints(xs[1]))


def range_(n, xs):
    start, limit, delta = (v.item() for v in xs)
    return torch.arange(start, limit, delta, dtype=xs[0].dtype)


def where(n, xs):
    return torch.where(*xs)


def clip(n, xs):
    lo = xs[1].item() if opt(xs, 1) is not None else None
    hi = xs[2].item() if opt(xs, 2) is not None else None
    return torch.clamp(xs[0], lo, hi)


def scatter_nd(n, xs):
    data, idx, updates = xs
    if n.attrs.get("reduction", "none") != "none":
        raise SystemExit(f"{n.describe()}: ScatterND reduction not supported")
    y = data.clone()
    y[tuple(idx.to(y.device).unbind(-1))] = updates
    return y


def reduce(fn):
    def run(n, xs):
        x = xs[0]
        axes = n.attrs.get("axes")
        if axes is None and opt(xs, 1) is not None:
            axes = ints(xs[1])
        keep = bool(n.attrs.get("keepdims", 1))
        if not axes:
            y = fn(x, list(range(x.dim())), False)
            return y.reshape([1] * x.dim()) if keep else y
        return fn(x, [axis_of(x, a) for a in axes], keep)

    return run


def reduce_prod(x, axes, keep):
    for a in sorted(axes, reverse=True):
        x = torch.prod(x, a, keepdim=keep)
    return x


def softmax(n, xs):
    return torch.softmax(xs[0], n.attrs.get("axis", -1))


def leaky_relu(n, xs):
    return F.leaky_relu(xs[0], n.attrs.get("alpha", 0.01))


def prelu(n, xs):
    x, slope = xs
    per_channel = x.dim() >= 2 and slope.shape[0] == x.shape[1] and slope.numel() == x.shape[1]
    if slope.numel() == 1 or (per_channel and slope.dim() == x.dim() - 1):
        return F.prelu(x, slope.reshape(-1))
    return torch.where(x >= 0, x, x * slope)


# Debian's CPU torch (the development check) links the reference BLAS (BLAS_INFO=generic, ~4 GFLOP/s
# on two cores): there fp32 products on the CPU go through oneDNN's inner product, ~10x faster, so
# that BS-RoFormer's check takes minutes, not an hour. CUDA always takes torch.matmul / addmm (cuBLAS).
SLOW_CPU_BLAS = "BLAS_INFO=generic" in torch.__config__.show()


def onednn_product(a, b):
    """a [..., K] @ b [K, N] through oneDNN (CPU, fp32)."""
    k, n = b.shape
    y = torch._C._nn.mkldnn_linear(a.reshape(-1, k).contiguous().to_mkldnn(), b.t().contiguous().to_mkldnn(), None)
    return y.to_dense().reshape(tuple(a.shape[:-1]) + (n,))


def matmul(a, b):
    if not (SLOW_CPU_BLAS and a.device.type == "cpu" and a.dtype == torch.float32 and b.dim() >= 2):
        return torch.matmul(a, b)
    if b.dim() == 2:
        return onednn_product(a, b)
    if a.dim() < 2:
        return torch.matmul(a, b)
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a3 = a.expand(batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    b3 = b.expand(batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    y = torch.stack([onednn_product(x, w) for x, w in zip(a3, b3)])
    return y.reshape(batch + (a.shape[-2], b.shape[-1]))


def gemm(n, xs):
    a, b = xs[0], xs[1]
    c = opt(xs, 2)
    if n.attrs.get("transA", 0):
        a = a.t()
    if n.attrs.get("transB", 0):
        b = b.t()
    alpha, beta = n.attrs.get("alpha", 1.0), n.attrs.get("beta", 1.0)
    if SLOW_CPU_BLAS and a.device.type == "cpu":
        y = matmul(a, b) * alpha
        return y if c is None else y + beta * c
    if c is None:
        return torch.mm(a, b) if alpha == 1.0 else alpha * torch.mm(a, b)
    return torch.addmm(c, a, b, beta=beta, alpha=alpha)


CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def conv_attrs(n, x, w):
    k = x.dim() - 2
    if n.attrs.get("auto_pad", "NOTSET") != "NOTSET":
        raise SystemExit(f"{n.describe()}: auto_pad not supported")
    pads = n.attrs.get("pads", [0] * 2 * k)
    return (k, pads[:k], pads[k:], n.attrs.get("strides", [1] * k), n.attrs.get("dilations", [1] * k),
            n.attrs.get("group", 1))


def conv(n, xs):
    x, w = xs[0], xs[1]
    b = opt(xs, 2)
    k, begin, end, strides, dilations, group = conv_attrs(n, x, w)
    if begin != end:  # asymmetric: pad explicitly, as the original module's F.pad would
        x = F.pad(x, [p for d in reversed(range(k)) for p in (begin[d], end[d])])
        begin = [0] * k
    return CONV[k](x, w, b, strides, begin, dilations, group)


def conv_transpose(n, xs):
    x, w = xs[0], xs[1]
    b = opt(xs, 2)
    k, begin, end, strides, dilations, group = conv_attrs(n, x, w)
    if "output_shape" in n.attrs:
        raise SystemExit(f"{n.describe()}: output_shape not supported")
    out_pad = n.attrs.get("output_padding", [0] * k)
    if begin == end:
        return CONV_T[k](x, w, b, strides, begin, out_pad, group, dilations)
    y = CONV_T[k](x, w, b, strides, 0, out_pad, group, dilations)
    return y[(slice(None), slice(None)) + tuple(slice(begin[d], y.shape[2 + d] - end[d]) for d in range(k))]


def instance_norm(n, xs):
    return F.instance_norm(xs[0], weight=xs[1], bias=xs[2], eps=n.attrs.get("epsilon", 1e-5))


def layer_norm(n, xs):
    if len([o for o in n.outputs if o]) > 1:
        raise SystemExit(f"{n.describe()}: Mean / InvStdDev outputs not supported")
    x = xs[0]
    axis = axis_of(x, n.attrs.get("axis", -1))
    b = opt(xs, 2)
    return F.layer_norm(x, x.shape[axis:], xs[1], b, n.attrs.get("epsilon", 1e-5))


def batch_norm(n, xs):
    if n.attrs.get("training_mode", 0):
        raise SystemExit(f"{n.describe()}: training_mode not supported")
    x, scale, bias, mean, var = xs
    return F.batch_norm(x, mean, var, scale, bias, False, 0.0, n.attrs.get("epsilon", 1e-5))


def average_pool(n, xs):
    x = xs[0]
    k = x.dim() - 2
    pads = n.attrs.get("pads", [0] * 2 * k)
    if pads[:k] != pads[k:] or n.attrs.get("auto_pad", "NOTSET") != "NOTSET":
        raise SystemExit(f"{n.describe()}: asymmetric or automatic padding not supported")
    pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[k]
    return pool(x, n.attrs["kernel_shape"], n.attrs.get("strides", n.attrs["kernel_shape"]), pads[:k],
                bool(n.attrs.get("ceil_mode", 0)), bool(n.attrs.get("count_include_pad", 0)))


def resize(n, xs):
    x = xs[0]
    mode, coords = n.attrs.get("mode", "nearest"), n.attrs.get("coordinate_transformation_mode", "half_pixel")
    if mode != "linear" or coords != "align_corners":
        raise SystemExit(f"{n.describe()}: Resize mode {mode} / {coords} not supported (linear + align_corners)")
    sizes = opt(xs, 3)
    if sizes is not None and sizes.numel():
        out = ints(sizes)
    else:
        out = [int(math.floor(d * s)) for d, s in zip(x.shape, xs[2].reshape(-1).tolist())]
    if out[:2] != list(x.shape[:2]) or not 1 <= x.dim() - 2 <= 3:
        raise SystemExit(f"{n.describe()}: only the spatial dims of a 3-5D tensor may be resized")
    interp = {1: "linear", 2: "bilinear", 3: "trilinear"}[x.dim() - 2]
    return F.interpolate(x, size=out[2:], mode=interp, align_corners=True)


def as_complex(x):
    """A [..., 2] real pair tensor as a complex view (a copy where its strides forbid the view)."""
    try:
        return torch.view_as_complex(x)
    except RuntimeError:
        return torch.view_as_complex(x.contiguous())


def dft(n, xs):
    x = xs[0]
    axis = axis_of(x, n.attrs.get("axis", 1))
    inverse, onesided = bool(n.attrs.get("inverse", 0)), bool(n.attrs.get("onesided", 0))
    length = ints(xs[1])[0] if opt(xs, 1) is not None else None
    real = x.shape[-1] == 1
    if inverse and onesided:  # Hermitian half spectrum -> real signal (irfft, 1/n)
        return torch.fft.irfft(as_complex(x), n=length, dim=axis).unsqueeze(-1)
    if not inverse and onesided and real:
        return torch.view_as_real(torch.fft.rfft(x[..., 0], n=length, dim=axis))
    c = x[..., 0].to(torch.complex64) if real else as_complex(x)
    y = (torch.fft.ifft if inverse else torch.fft.fft)(c, n=length, dim=axis)
    if onesided:
        y = y.narrow(axis, 0, y.shape[axis] // 2 + 1)
    return torch.view_as_real(y)


def stft(n, xs):
    signal, step = xs[0], ints(xs[1])[0]
    window = opt(xs, 2)
    length = ints(xs[3])[0] if opt(xs, 3) is not None else window.shape[0]
    if signal.shape[-1] != 1:
        raise SystemExit(f"{n.describe()}: complex STFT input not supported")
    y = torch.stft(signal[..., 0], length, step, length, window, center=False,
                   onesided=bool(n.attrs.get("onesided", 1)), return_complex=True)
    return torch.view_as_real(y).transpose(1, 2)  # [batch, bins, frames] -> [batch, frames, bins, 2]


def reorder_gates(t, order, hidden):
    """ONNX's gate blocks (rows of `hidden`) to torch's order: order[i] = ONNX block of torch block i."""
    blocks = t.split(hidden, 0)
    return torch.cat([blocks[i] for i in order], 0)


def cpu_recurrence(kind, module, dirs, x, state):
    """What torch.nn.LSTM / GRU `module` computes, with its own weights, the products through oneDNN:
    the development check's path on a CPU with the reference BLAS (SCNet's LSTMs: minutes, not an
    hour). Returns (y [seq, batch, dirs * hidden], h_n, c_n or None) as the module does."""
    seq, batch = x.shape[0], x.shape[1]
    hidden = module.hidden_size
    ys, hs, cs = [], [], []
    for d, suffix in enumerate(["", "_reverse"][:dirs]):
        w_ih, w_hh = getattr(module, "weight_ih_l0" + suffix), getattr(module, "weight_hh_l0" + suffix)
        b_ih, b_hh = getattr(module, "bias_ih_l0" + suffix, None), getattr(module, "bias_hh_l0" + suffix, None)
        from_input = onednn_product(x, w_ih.t()) + (b_ih if b_ih is not None else 0)
        h = state[0][d] if kind == "LSTM" and state is not None else (state[d] if state is not None else
                                                                        x.new_zeros(batch, hidden))
        c = state[1][d] if kind == "LSTM" and state is not None else x.new_zeros(batch, hidden)
        out = [None] * seq
        for t in (range(seq - 1, -1, -1) if d else range(seq)):
            from_h = onednn_product(h, w_hh.t()) + (b_hh if b_hh is not None else 0)
            if kind == "LSTM":  # torch's gate order: i f g o
                i, f, g, o = (from_input[t] + from_h).chunk(4, 1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
            else:  # r z n, the reset gate applied to the recurrent product (+ its bias)
                ir, iz, i_n = from_input[t].chunk(3, 1)
                hr, hz, h_n = from_h.chunk(3, 1)
                r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
                h = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
            out[t] = h
        ys.append(torch.stack(out))
        hs.append(h)
        cs.append(c)
    y = torch.cat(ys, 2)
    return y, torch.stack(hs), torch.stack(cs) if kind == "LSTM" else None


def recurrent(kind):
    """LSTM (ONNX gates i o f c -> torch i f g o) and GRU (z r h -> r z n; torch's GRU is ONNX's
    linear_before_reset=1) through torch.nn.LSTM / GRU: cuDNN with flattened weights on CUDA."""
    gates, order = {"LSTM": (4, [0, 2, 3, 1]), "GRU": (3, [1, 0, 2])}[kind]

    def prepare(n, consts, device):
        w, r, b = (consts.get(name) for name in n.inputs[1:4])
        if w is None or r is None or (n.inputs[3:4] and n.inputs[3] and b is None):
            raise SystemExit(f"{n.describe()}: weights must be constants")
        if n.attrs.get("layout", 0) or "activations" in n.attrs or "clip" in n.attrs:
            raise SystemExit(f"{n.describe()}: layout / activations / clip not supported")
        if kind == "GRU" and not n.attrs.get("linear_before_reset", 0):
            raise SystemExit(f"{n.describe()}: torch's GRU is linear_before_reset=1 only")
        hidden = n.attrs["hidden_size"]
        dirs = {"forward": 1, "reverse": 1, "bidirectional": 2}[n.attrs.get("direction", "forward")]
        if n.attrs.get("direction") == "reverse":
            raise SystemExit(f"{n.describe()}: direction 'reverse' not supported")
        with torch.inference_mode(False), torch.no_grad():
            module = getattr(torch.nn, kind)(w.shape[2], hidden, bidirectional=dirs == 2, bias=b is not None)
            for d, suffix in enumerate(["", "_reverse"][:dirs]):
                getattr(module, "weight_ih_l0" + suffix).copy_(reorder_gates(w[d], order, hidden))
                getattr(module, "weight_hh_l0" + suffix).copy_(reorder_gates(r[d], order, hidden))
                if b is not None:
                    getattr(module, "bias_ih_l0" + suffix).copy_(reorder_gates(b[d, :gates * hidden], order, hidden))
                    getattr(module, "bias_hh_l0" + suffix).copy_(reorder_gates(b[d, gates * hidden:], order, hidden))
            module = module.to(device).eval()
            if device.type == "cuda":
                module.flatten_parameters()
        n.module, n.dirs, n.hidden = module, dirs, hidden
        return [1, 2, 3]  # inputs the module holds

    def run(n, xs):
        x = xs[0]
        lengths = opt(xs, 4)
        if lengths is not None and not bool((lengths == x.shape[0]).all()):
            raise SystemExit(f"{n.describe()}: sequence_lens shorter than the sequence not supported")
        h0 = opt(xs, 5)
        state = None
        if kind == "LSTM":
            c0 = opt(xs, 6)
            if h0 is not None or c0 is not None:  # cuDNN wants contiguous states
                zeros = x.new_zeros(n.dirs, x.shape[1], n.hidden)
                state = ((h0 if h0 is not None else zeros).contiguous(), (c0 if c0 is not None else zeros).contiguous())
        else:
            state = h0.contiguous() if h0 is not None else None
        if SLOW_CPU_BLAS and x.device.type == "cpu":
            y, h, c = cpu_recurrence(kind, n.module, n.dirs, x, state)
        elif kind == "LSTM":
            y, (h, c) = n.module(x, state)
        else:
            (y, h), c = n.module(x, state), None
        seq, batch = y.shape[0], y.shape[1]
        y = y.view(seq, batch, n.dirs, n.hidden).permute(0, 2, 1, 3)  # ONNX Y: [seq, dirs, batch, hidden]
        return (y, h, c)[:len(n.outputs)]

    run.prepare = prepare
    return run


OPS = {
    # elementwise
    "Add": elementwise(torch.add), "Sub": elementwise(torch.sub), "Mul": elementwise(torch.mul),
    "Div": elementwise(div), "Pow": elementwise(torch.pow), "Mod": mod,
    "Equal": elementwise(torch.eq), "Less": elementwise(torch.lt), "Greater": elementwise(torch.gt),
    "Where": where, "Neg": elementwise(torch.neg), "Abs": elementwise(torch.abs),
    "Sqrt": elementwise(torch.sqrt), "Erf": elementwise(torch.erf), "Sigmoid": elementwise(torch.sigmoid),
    "Tanh": elementwise(torch.tanh), "Relu": elementwise(torch.relu), "Sin": elementwise(torch.sin),
    "Cos": elementwise(torch.cos), "Atan": elementwise(torch.atan), "LeakyRelu": leaky_relu, "PRelu": prelu,
    "Clip": clip, "Cast": cast, "Identity": lambda n, xs: xs[0],
    # shapes and layout
    "Constant": constant, "ConstantOfShape": constant_of_shape, "Shape": shape, "Gather": gather,
    "Unsqueeze": unsqueeze, "Squeeze": squeeze, "Reshape": reshape, "Transpose": transpose, "Slice": slice_,
    "Split": split,
    "Concat": concat, "Expand": expand, "Pad": pad, "Tile": tile, "Range": range_, "ScatterND": scatter_nd,
    # reductions and normalizations
    "ReduceMean": reduce(lambda x, a, k: torch.mean(x, a, keepdim=k)),
    "ReduceL2": reduce(lambda x, a, k: torch.linalg.vector_norm(x, 2, a, keepdim=k)),
    "ReduceProd": reduce(reduce_prod), "Softmax": softmax, "InstanceNormalization": instance_norm,
    "LayerNormalization": layer_norm, "BatchNormalization": batch_norm,
    # products, convolutions, recurrences, spectra
    "MatMul": elementwise(matmul), "Gemm": gemm, "Conv": conv, "ConvTranspose": conv_transpose,
    "AveragePool": average_pool, "Resize": resize, "LSTM": recurrent("LSTM"), "GRU": recurrent("GRU"),
    "DFT": dft, "STFT": stft,
}
HOST_INPUTS = {
    "Reshape": {1}, "Unsqueeze": {1}, "Squeeze": {1}, "Slice": {1, 2, 3, 4}, "Split": {1}, "Expand": {1},
    "Pad": {1, 2, 3}, "Tile": {1}, "ConstantOfShape": {0}, "Range": {0, 1, 2}, "Clip": {1, 2},
    "Resize": {1, 2, 3}, "LSTM": {4}, "GRU": {4}, "DFT": {1}, "STFT": {1, 3}, "ReduceMean": {1}, "ReduceL2": {1},
    "ReduceProd": {1},
}


# ---------------------------------------------------------------------------------------------------
# Executor


class Executor:
    """Runs the graph eagerly. prepare() (the first run) folds the constant nodes and builds the plan:
    the device nodes with their inputs (environment names or resident constants) and, after each,
    the names whose last reader it was."""

    def __init__(self, path, device):
        self.nodes, self.consts, self.inputs, self.outputs = load_graph(path)
        self.initializers = set(self.consts)
        self.device = device
        for n in self.nodes:
            if n.op not in OPS:
                raise SystemExit(f"{path}: {n.describe()}: op not supported by bench/torch_onnx.py")
        self.plan = None
        self.resident = {}  # name -> device tensor (weights and folded constants that device nodes read)

    def fetch(self, env, name, host):
        if not name:
            return None
        if name in env:
            return env[name]
        value = self.consts[name]
        if host:
            return value
        if name not in self.resident:
            self.resident[name] = value.to(self.device)
        return self.resident[name]

    def live_bytes(self, env, feeds):
        """Bytes of the distinct storages the environment, the inputs and the resident constants hold
        (views share their base's storage)."""
        storages = {}
        for t in list(env.values()) + list(feeds.values()) + list(self.resident.values()):
            st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
            storages[st.data_ptr()] = st.nbytes()
        return sum(storages.values())

    def prepare(self, feeds, live=None):
        """The first run: folds, uploads, builds the plan; returns the outputs. With a list `live`,
        appends the live bytes after each device node (live_bytes) to it."""
        env = dict(feeds)
        last_reader = {}
        for n in self.nodes:
            for name in n.inputs:
                last_reader[name] = n.index
        kept = set(self.outputs)
        plan = []
        for n in self.nodes:
            present = [name for name in n.inputs if name]
            if n.op == "Shape" or all(name in self.consts for name in present):
                xs = [env[name] if name in env else self.consts.get(name) for name in n.inputs]
                outs = OPS[n.op](n, xs)
                for name, value in zip(n.outputs, outs if isinstance(outs, tuple) else (outs,)):
                    if name in kept:
                        env[name] = value.to(self.device)
                    else:
                        self.consts[name] = value.cpu() if n.op != "Shape" else value
            else:
                host = HOST_INPUTS.get(n.op, set())
                if n.op == "Gather" and n.inputs[1] in self.consts and self.consts[n.inputs[1]].dim() == 0:
                    host = {1}  # a constant scalar index: select() on the host's number, no upload
                held = OPS[n.op].prepare(n, self.consts, self.device) if hasattr(OPS[n.op], "prepare") else []
                for i in host:
                    if i < len(n.inputs) and n.inputs[i] and n.inputs[i] not in self.consts:
                        print(f"  note: {n.describe()} reads device value '{n.inputs[i]}' on the host (a sync)")
                args = []
                for i, name in enumerate(n.inputs):
                    if i in held or not name:
                        args.append(None)
                    elif name in self.consts:
                        args.append(("const", self.fetch(env, name, i in host)))
                    else:
                        args.append(("env", name, i in host))
                plan.append((n, args))
                self.step(n, args, env)
                if live is not None:
                    live.append(self.live_bytes(env, feeds))
            for name in set(n.inputs) | set(n.outputs):  # inputs read for the last time, outputs never read
                if name in env and last_reader.get(name, n.index) <= n.index and name not in kept:
                    del env[name]
        # After each step: the environment names whose last reader it was, and its outputs no step reads.
        last = {}
        for k, (n, args) in enumerate(plan):
            for name in n.outputs:
                if name:
                    last[name] = k
            for a in args:
                if a is not None and a[0] == "env":
                    last[a[1]] = k
        frees = [[] for _ in plan]
        for name, k in last.items():
            if name not in kept:
                frees[k].append(name)
        self.plan = [(n, args, frees[k]) for k, (n, args) in enumerate(plan)]
        self.consts = None  # only the resident constants stay (on the device)
        return [env[name] for name in self.outputs]

    @staticmethod
    def step(n, args, env):
        xs = []
        for a in args:
            if a is None:
                xs.append(None)
            elif a[0] == "const":
                xs.append(a[1])
            else:
                x = env[a[1]]
                xs.append(x.cpu() if a[2] and x.device.type != "cpu" else x)
        outs = OPS[n.op](n, xs)
        for name, value in zip(n.outputs, outs if isinstance(outs, tuple) else (outs,)):
            if name:
                env[name] = value

    def run(self, feeds, profile=None, live=None):
        """One run; with a dict `profile`, adds each op type's ms to it (synchronising after each node);
        with a list `live`, appends the live bytes after each node to it."""
        env = dict(feeds)
        cuda = self.device.type == "cuda"
        for n, args, frees in self.plan:
            if profile is not None:
                start = time.perf_counter()
            self.step(n, args, env)
            if profile is not None:
                if cuda:
                    torch.cuda.synchronize()
                profile[n.op] = profile.get(n.op, 0.0) + (time.perf_counter() - start) * 1e3
            if live is not None:
                live.append(self.live_bytes(env, feeds))
            for name in frees:
                del env[name]
        return [env[name] for name in self.outputs]


# ---------------------------------------------------------------------------------------------------
# Inputs, checks, main


def file_name(name):
    """Where `onda run --output-dir` and tools/compare/ort_run.js write output `name`."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".npy"


def rel_l2(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def ort_outputs(path, feeds):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count()
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def mib(b):
    return b / (1 << 20)


def weight_bytes(ex, folded_only=False):
    """The resident constants and the recurrent modules' parameters: the model's weights on the device
    (folded_only: the constants computed by folding, not initializers: rotary tables, transposed weights)."""
    total = sum(t.numel() * t.element_size() for name, t in ex.resident.items()
                if not (folded_only and name in ex.initializers))
    if folded_only:
        return total
    return total + sum(p.numel() * p.element_size() for n, _, _ in ex.plan if hasattr(n, "module")
                       for p in n.module.parameters())


def measure_cuda(ex, feeds, args):
    """Peak memory of one run, then the median of args.runs; returns the outputs of one more run."""
    from cuda_timing import median_ms

    weights = weight_bytes(ex)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    outs = ex.run(feeds)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    inputs = sum(t.numel() * t.element_size() for t in feeds.values())
    print(f"torch peak GPU memory: {mib(peak):.1f} MiB = activations {mib(peak - weights):.1f} MiB at peak "
          f"+ weights {mib(weights):.1f} MiB (torch.cuda.max_memory_allocated; the activations include the "
          f"inputs, {mib(inputs):.1f} MiB; allocated before the run {mib(before):.1f} MiB, peak reserved by the "
          f"caching allocator {mib(torch.cuda.max_memory_reserved()):.1f} MiB)")
    del outs
    ms = median_ms(lambda: ex.run(feeds), repeats=args.runs, warmup=args.warmup)
    print(f"torch runs: {args.runs}  median {ms:.3f} ms (CUDA events, after {args.warmup} warm-up runs)")
    return ex.run(feeds)


def time_cpu(ex, feeds, args, outs):
    """The median of args.runs on the CPU clock; returns the last run's outputs (with --runs 0, `outs`)."""
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        outs = ex.run(feeds)
        times.append((time.perf_counter() - start) * 1e3)
    if times:
        print(f"torch runs: {args.runs}  median {sorted(times)[len(times) // 2]:.1f} ms (CPU clock)")
    return outs


def print_profile(ex, feeds):
    profile = {}
    ex.run(feeds, profile)
    total = sum(profile.values())
    print(f"torch profile (synchronised per node): {total:.1f} ms")
    for op, ms in sorted(profile.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {op:24s} {ms:9.2f} ms {100 * ms / total:5.1f}%")


def print_live(ex, live):
    """The live-tensor peak: a lower bound of max_memory_allocated (no workspaces, no temporaries inside
    an op), computable on the CPU; its node says where the peak is."""
    modules = weight_bytes(ex) - sum(t.numel() * t.element_size() for t in ex.resident.values())
    k = max(range(len(live)), key=live.__getitem__)
    node = ex.plan[k][0]
    print(f"torch live tensors: peak {mib(live[k] + modules):.1f} MiB after {node.describe()} (node {k + 1} of "
          f"{len(ex.plan)} on the device; weights and inputs included; no workspaces or temporaries inside ops)")


def check(path, name, arrays, results, args):
    """rel L2 of each output against --reference DIR's .npy files or ONNX Runtime CPU (--ort)."""
    if args.ort:
        references, source = ort_outputs(path, arrays), "ONNX Runtime CPU"
    elif args.reference:  # model_matches_ort.sh's layout (DIR/NAME/ort/), DIR/NAME/ or DIR itself
        candidates = [os.path.join(args.reference, name, "ort"), os.path.join(args.reference, name)]
        source = next((c for c in candidates if os.path.isdir(c)), args.reference)
        references = {o: np.load(os.path.join(source, file_name(o))) for o in results
                      if os.path.exists(os.path.join(source, file_name(o)))}
    else:
        return
    if not references:
        print(f"torch rel L2: no reference outputs in {source}")
    for o, ref in references.items():
        print(f"torch rel L2 {o}: {rel_l2(results[o], ref):.2e} against {source}")


def save(folder, arrays, results):
    os.makedirs(folder, exist_ok=True)
    for i, a in arrays.items():
        np.save(os.path.join(folder, "input_" + file_name(i)), a)
    for o, a in results.items():
        np.save(os.path.join(folder, file_name(o)), a)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="model names (in --models-dir) or .onnx paths")
    parser.add_argument("--models-dir", default="models")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--runs", type=int, default=20, help="timed runs (on the CPU 0: check the first run)")
    parser.add_argument("--warmup", type=int, default=3, help="runs after the preparing run, before timing")
    parser.add_argument("--reference", default="",
                        help="reference outputs: DIR/NAME/ort/*.npy (build/model-check), DIR/NAME/*.npy or DIR/*.npy")
    parser.add_argument("--ort", action="store_true", help="check against ONNX Runtime CPU (python onnxruntime)")
    parser.add_argument("--save", default="", help="write each model's inputs and outputs under SAVE/NAME/")
    parser.add_argument("--profile", action="store_true", help="one more run, synchronised per node: ms by op type")
    parser.add_argument("--live", action="store_true",
                        help="the peak of the live tensors' bytes at node boundaries (any device; on the CPU, "
                        "of the preparing run)")
    parser.add_argument("--cudnn-benchmark", action="store_true",
                        help="torch.backends.cudnn.benchmark (default off: eager PyTorch's default)")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    label = torch.cuda.get_device_name(device) if cuda else f"CPU, {torch.get_num_threads()} threads"
    print(f"torch {torch.__version__} on {label}; fp32, TF32 matmul {torch.backends.cuda.matmul.allow_tf32} cuDNN "
          f"{torch.backends.cudnn.allow_tf32}, cudnn.benchmark {args.cudnn_benchmark}")
    for model in args.models:
        path = model if model.endswith(".onnx") else os.path.join(args.models_dir, model + ".onnx")
        name = os.path.basename(path)[:-len(".onnx")]
        start = time.perf_counter()
        ex = Executor(path, device)
        load_s = time.perf_counter() - start
        rng = np.random.default_rng(0)
        arrays = {i: make_input(name, i, s, rng) for i, s in ex.inputs}
        feeds = {i: torch.from_numpy(a).to(device) for i, a in arrays.items()}
        start = time.perf_counter()
        live = [] if args.live and not cuda else None
        with torch.no_grad():
            outs = ex.prepare(feeds, live)
        if cuda:
            torch.cuda.synchronize()
        first_ms = (time.perf_counter() - start) * 1e3
        print(f"== {name}: {len(ex.nodes)} nodes, {len(ex.plan)} on the device; load {load_s:.1f} s, first "
              f"(preparing) run {first_ms:.0f} ms; weights {mib(weight_bytes(ex)):.1f} MiB, of which computed by "
              f"folding {mib(weight_bytes(ex, folded_only=True)):.1f} MiB")
        with torch.inference_mode():
            if cuda:
                del outs
                outs = measure_cuda(ex, feeds, args)
            else:
                outs = time_cpu(ex, feeds, args, outs)
            if args.profile:
                print_profile(ex, feeds)
            if args.live:
                if cuda:
                    live = []
                    ex.run(feeds, live=live)
                print_live(ex, live)
        results = {o: t.detach().cpu().numpy() for o, t in zip(ex.outputs, outs)}
        del ex, feeds, outs
        if cuda:
            torch.cuda.empty_cache()
        if args.save:
            save(os.path.join(args.save, name), arrays, results)
        check(path, name, arrays, results, args)


if __name__ == "__main__":
    main()
