#!/usr/bin/env python3
"""A small streaming speech enhancer as exported streaming models look (GTCRN, DeepFilterNet's
streaming exports): one STFT frame in, 257 bins x (real, imag) as 514 channels of one time step;
two causal 1-D convolutions (kernel 3) whose last two input frames come in as caches and go out
updated; a GRU (hidden 256) with its hidden state in and out; a sigmoid mask of 257 bins out.
Deterministic (seeded weights), opset 17.

  python3 bench/make_streaming_model.py OUT.onnx [--frames N FRAMES.bin]

The inputs: spec [1, 514, 1], cache_in_0 [1, 514, 2], cache_in_1 [1, 256, 2], h0 [1, 1, 256]; the
outputs: mask [1, 257, 1], cache_out_0, cache_out_1, hn (onda pairs them by name: onda/stream.h).
--frames writes N deterministic input frames as raw float32 [N, 514] for both timing drivers."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BINS, CHANNELS, HIDDEN, KERNEL = 257, 256, 256, 3


def build(seed=0):
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def weight(name, shape, scale):
        inits.append(numpy_helper.from_array((scale * rng.standard_normal(shape)).astype(np.float32), name))
        return name

    def const_i64(name, values):
        inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def causal_conv(x, cache_in, cache_out, c_in, c_out, tag):
        # [cache (K-1 frames) | frame] -> Conv (kernel K, no padding) -> one output frame; the last
        # K-1 frames become the next cache.
        window = f"{tag}_window"
        nodes.append(helper.make_node("Concat", [cache_in, x], [window], axis=2))
        nodes.append(helper.make_node("Slice", [window, const_i64(f"{tag}_start", [1]), const_i64(f"{tag}_end", [KERNEL]),
                                               const_i64(f"{tag}_axis", [2])], [cache_out]))
        w = weight(f"{tag}_w", (c_out, c_in, KERNEL), 1.0 / np.sqrt(c_in * KERNEL))
        b = weight(f"{tag}_b", (c_out,), 0.05)
        nodes.append(helper.make_node("Conv", [window, w, b], [f"{tag}_conv"], kernel_shape=[KERNEL]))
        nodes.append(helper.make_node("Relu", [f"{tag}_conv"], [f"{tag}_out"]))
        return f"{tag}_out"

    x = causal_conv("spec", "cache_in_0", "cache_out_0", 2 * BINS, CHANNELS, "conv0")
    x = causal_conv(x, "cache_in_1", "cache_out_1", CHANNELS, CHANNELS, "conv1")
    # [1, C, 1] -> [T=1, B=1, C] for the GRU.
    nodes.append(helper.make_node("Transpose", [x], ["gru_in"], perm=[2, 0, 1]))
    scale = 1.0 / np.sqrt(HIDDEN)
    w = weight("gru_w", (1, 3 * HIDDEN, CHANNELS), scale)
    r = weight("gru_r", (1, 3 * HIDDEN, HIDDEN), scale)
    b = weight("gru_b", (1, 6 * HIDDEN), 0.05)
    nodes.append(helper.make_node("GRU", ["gru_in", w, r, b, "", "h0"], ["gru_y", "hn"], hidden_size=HIDDEN,
                                  linear_before_reset=1))
    nodes.append(helper.make_node("Reshape", ["gru_y", const_i64("flat_shape", [1, HIDDEN])], ["gru_flat"]))
    wm = weight("mask_w", (HIDDEN, BINS), 1.0 / np.sqrt(HIDDEN))
    bm = weight("mask_b", (BINS,), 0.05)
    nodes.append(helper.make_node("Gemm", ["gru_flat", wm, bm], ["mask_logits"]))
    nodes.append(helper.make_node("Sigmoid", ["mask_logits"], ["mask_flat"]))
    nodes.append(helper.make_node("Reshape", ["mask_flat", const_i64("mask_shape", [1, BINS, 1])], ["mask"]))

    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("spec", f, [1, 2 * BINS, 1]),
              helper.make_tensor_value_info("cache_in_0", f, [1, 2 * BINS, KERNEL - 1]),
              helper.make_tensor_value_info("cache_in_1", f, [1, CHANNELS, KERNEL - 1]),
              helper.make_tensor_value_info("h0", f, [1, 1, HIDDEN])]
    outputs = [helper.make_tensor_value_info("mask", f, [1, BINS, 1]),
               helper.make_tensor_value_info("cache_out_0", f, [1, 2 * BINS, KERNEL - 1]),
               helper.make_tensor_value_info("cache_out_1", f, [1, CHANNELS, KERNEL - 1]),
               helper.make_tensor_value_info("hn", f, [1, 1, HIDDEN])]
    graph = helper.make_graph(nodes, "streaming_enhancer", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onda bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--frames", nargs=2, metavar=("N", "FILE"))
    args = parser.parse_args()
    onnx.save(build(), args.out)
    if args.frames:
        n, path = int(args.frames[0]), args.frames[1]
        rng = np.random.default_rng(1)
        (0.3 * rng.standard_normal((n, 2 * BINS))).astype(np.float32).tofile(path)


if __name__ == "__main__":
    main()
