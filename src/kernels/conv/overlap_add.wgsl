// ConvTranspose whose weight is a windowed identity ([C, 1, C], w[c, 0, k] = 0 unless c == k: the
// iSTFT overlap-add of exported HTDemucs / SCNet) as a memory-bound gather:
// y[n, 0, o] = bias + sum over taps k = o + pad - i * s in [0, C), 0 <= i < L_in, of x[n, k, i] * diag[k],
// i.e. C / s frames per output instead of the dense GEMM's C^2 / s multiply-adds. CHECKED: the
// diagonal was extracted on the GPU by windowed_identity_check.wgsl, which also raised `flag` if the
// weight has other non-zero entries; then this kernel computes the dense sum instead.
// WINDOWED (a weight over one storage binding, overlap_add_windows.cpp): one dispatch per window of
// input channels [chunk.x, chunk.y), W's rows of those channels bound (offsets.y relative to the
// window); the sum so far is carried in `partial` (chunk.z bit 0: continue it, bit 1: the last window,
// which stores Y). Windows run from the highest channels down, so the diagonal sum adds its frames in
// the unwindowed order.
#include "conv/conv_common.wgsl"
#include "gemm/activation.wgsl"
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read> diag: array<f32>;
#if CHECKED
@group(0) @binding(2) var<storage, read> flag: array<u32>;
{{W_ACCESS}}
#endif
{{BIAS_ACCESS}}
{{Y_ACCESS}}
#if WINDOWED
@group(0) @binding({{PARTIAL_BINDING}}) var<storage, read_write> partial: array<f32>;
#endif
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: ConvParams;

#include "conv/conv_main.wgsl"
  let length_out = params.out_size.z;
  let length_in = i32(params.in_size.z);
  let channels = params.kernel.z;
  let s = i32(params.stride.z);
  let o = idx % length_out;
  let n = idx / length_out;
  let t = i32(o) + params.pad.z;
#if WINDOWED
  let c_begin = params.chunk.x;
  let c_end = params.chunk.y;
#else
  let c_begin = 0u;
  let c_end = channels;
#endif
  // Frames i with k = t - i * s in [c_begin, c_end): i from ceil((t - c_end + 1) / s) to
  // floor((t - c_begin) / s).
  let highest = t - i32(c_begin);
  var i_last = select((highest - (s - 1)) / s, highest / s, highest >= 0);
  let lowest = t - i32(c_end) + 1;
  var i_first = select(lowest / s, (lowest + s - 1) / s, lowest >= 0);
  i_first = max(i_first, 0);
  i_last = min(i_last, length_in - 1);
  var acc = 0.0;
#if HAS_BIAS
  acc = load_bias(params.offsets.z);
#endif
#if WINDOWED
  if ((params.chunk.z & 1u) != 0u) { acc = partial[idx]; }
#endif
  let x_base = params.offsets.x + n * channels * u32(length_in);
#if CHECKED
  // The weight turned out not to be a windowed identity: the dense transposed convolution
  // y[n, 0, o] += sum over channels c and taps k of x[n, c, i] w[c, 0, k] (uniform branch).
  if (flag[0] != 0u) {
    for (var k = first_tap(o, 2u); k < channels; k = k + params.tap_step.z) {
      let i = transpose_source(o, k, 2u);
      if (i < 0) { continue; }
      for (var c = c_begin; c < c_end; c = c + 1u) {
        acc = acc + load_x(x_base + c * u32(length_in) + u32(i)) * load_w(params.offsets.y + c * channels + k);
      }
    }
#if WINDOWED
    if ((params.chunk.z & 2u) == 0u) {
      partial[idx] = acc;
      return;
    }
#endif
    store_y(params.offsets.w + n * length_out + o, activate(acc));
    return;
  }
#endif
  for (var i = i_first; i <= i_last; i = i + 1) {
    let k = u32(t - i * s);
    acc = acc + load_x(x_base + k * u32(length_in) + u32(i)) * diag[k];
  }
#if WINDOWED
  if ((params.chunk.z & 2u) == 0u) {
    partial[idx] = acc;
    return;
  }
#endif
  store_y(params.offsets.w + n * length_out + o, activate(acc));
}
