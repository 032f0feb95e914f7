// ONNX Resize over the last two dims ([.., H, W]; leading dims unchanged), modes nearest (any
// dtype: moves bits) and linear (f32/f16: bilinear in f32). Coordinates follow ONNX / ONNX Runtime
// in f32: x_original = transform(x_resized, scale, lengths), then nearest rounding or linear
// interpolation between the two clamped neighbours.
//   COORD: 0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel
//   NEAREST_MODE: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil

struct Params {
  threads: u32,
  words_per_row: u32,
  run_length: u32,
  out_offset: u32,
  in_offset: u32,
  in_h: u32,
  in_w: u32,
  out_h: u32,
  out_w: u32,
  scale_h: f32,
  scale_w: f32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> in_buf: array<u32>;
@group(0) @binding(1) var<storage, read_write> out_buf: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

#include "layout/load_bits.wgsl"

fn original_coordinate(x: u32, scale: f32, length_in: u32, length_out: u32) -> f32 {
  let xf = f32(x);
#if COORD_HALF_PIXEL
  return (xf + 0.5) / scale - 0.5;
#endif
#if COORD_ASYMMETRIC
  return xf / scale;
#endif
#if COORD_ALIGN_CORNERS
  if (length_out == 1u) { return 0.0; }
  return f32(x * (length_in - 1u)) / f32(length_out - 1u);
#endif
#if COORD_PYTORCH_HALF_PIXEL
  if (length_out == 1u) { return 0.0; }
  return (xf + 0.5) / scale - 0.5;
#endif
}

fn nearest_index(c: f32, length_in: u32) -> u32 {
#if NEAREST_ROUND_PREFER_FLOOR
  let r = ceil(c - 0.5);
#endif
#if NEAREST_ROUND_PREFER_CEIL
  let r = floor(c + 0.5);
#endif
#if NEAREST_FLOOR
  let r = floor(c);
#endif
#if NEAREST_CEIL
  let r = ceil(c);
#endif
  return u32(clamp(r, 0.0, f32(length_in - 1u)));
}

fn load_value(index: u32) -> f32 {
#if HALF
  return unpack2x16float(load_bits(index)).x;
#else
  return bitcast<f32>(load_bits(index));
#endif
}

fn out_address(lin: u32) -> u32 { return params.out_offset + lin; }

fn source_bits(lin: u32) -> u32 {
  let x = lin % params.out_w;
  let y = (lin / params.out_w) % params.out_h;
  let plane = params.in_offset + (lin / (params.out_w * params.out_h)) * params.in_h * params.in_w;
  let cy = original_coordinate(y, params.scale_h, params.in_h, params.out_h);
  let cx = original_coordinate(x, params.scale_w, params.in_w, params.out_w);
#if LINEAR
  let fy = clamp(cy, 0.0, f32(params.in_h - 1u));
  let fx = clamp(cx, 0.0, f32(params.in_w - 1u));
  let y0 = u32(fy);
  let x0 = u32(fx);
  let y1 = min(y0 + 1u, params.in_h - 1u);
  let x1 = min(x0 + 1u, params.in_w - 1u);
  let wy = fy - f32(y0);
  let wx = fx - f32(x0);
  let top = mix(load_value(plane + y0 * params.in_w + x0), load_value(plane + y0 * params.in_w + x1), wx);
  let bottom = mix(load_value(plane + y1 * params.in_w + x0), load_value(plane + y1 * params.in_w + x1), wx);
  let v = mix(top, bottom, wy);
#if HALF
  return pack2x16float(vec2<f32>(v, 0.0)) & 0xFFFFu;
#else
  return bitcast<u32>(v);
#endif
#else
  return load_bits(plane + nearest_index(cy, params.in_h) * params.in_w + nearest_index(cx, params.in_w));
#endif
}

#include "layout/store_elements.wgsl"
