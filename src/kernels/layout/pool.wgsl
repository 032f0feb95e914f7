// ONNX AveragePool / MaxPool over the last two dims of [.., H, W] (f32 or f16, f32 accumulation):
// one invocation per output element walks its kernel window. Window start = out * stride - pad;
// taps outside the input are skipped. AVERAGE divides by the taps inside the input, or with
// count_include_pad by the taps inside the padded input (ONNX / PyTorch rule).

struct Params {
  threads: u32,
  words_per_row: u32,
  run_length: u32,
  out_offset: u32,
  in_offset: u32,
  in_h: i32,
  in_w: i32,
  out_h: u32,
  out_w: u32,
  kernel_h: i32,
  kernel_w: i32,
  stride_h: i32,
  stride_w: i32,
  pad_top: i32,
  pad_left: i32,
  dilation_h: i32,
  dilation_w: i32,
  padded_h: i32,                      // in_h + pad_top + pad_bottom
  padded_w: i32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> in_buf: array<u32>;
@group(0) @binding(1) var<storage, read_write> out_buf: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

#include "layout/load_bits.wgsl"

fn load_value(index: u32) -> f32 {
#if HALF
  return unpack2x16float(load_bits(index)).x;
#else
  return bitcast<f32>(load_bits(index));
#endif
}

fn out_address(lin: u32) -> u32 { return params.out_offset + lin; }

fn source_bits(lin: u32) -> u32 {
  let x = i32(lin % params.out_w);
  let y = i32((lin / params.out_w) % params.out_h);
  let plane = params.in_offset + (lin / (params.out_w * params.out_h)) * u32(params.in_h * params.in_w);
  let y0 = y * params.stride_h - params.pad_top;
  let x0 = x * params.stride_w - params.pad_left;
#if AVERAGE
  var acc = 0.0;
  var taps = 0;
  var padded_taps = 0;
#else
  var acc = -3.4028234663852886e38;
#endif
  let end_h = params.padded_h - params.pad_top;  // padded extent, in input coordinates
  let end_w = params.padded_w - params.pad_left;
  for (var ky = 0; ky < params.kernel_h; ky = ky + 1) {
    let iy = y0 + ky * params.dilation_h;
    for (var kx = 0; kx < params.kernel_w; kx = kx + 1) {
      let ix = x0 + kx * params.dilation_w;
#if AVERAGE
      // count_include_pad counts the taps inside the padded input (a ceil-mode window can run past it).
      if (iy < end_h && ix < end_w) { padded_taps = padded_taps + 1; }
#endif
      if (iy < 0 || iy >= params.in_h || ix < 0 || ix >= params.in_w) { continue; }
      let v = load_value(plane + u32(iy * params.in_w + ix));
#if AVERAGE
      acc = acc + v;
      taps = taps + 1;
#else
      acc = max(acc, v);
#endif
    }
  }
#if AVERAGE
#if COUNT_INCLUDE_PAD
  taps = padded_taps;
#endif
  let v = acc / f32(max(taps, 1));
#else
  let v = acc;
#endif
#if HALF
  return pack2x16float(vec2<f32>(v, 0.0)) & 0xFFFFu;
#else
  return bitcast<u32>(v);
#endif
}

#include "layout/store_elements.wgsl"
