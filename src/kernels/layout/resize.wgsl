// ONNX Resize over the last two dims ([.., H, W]; leading dims unchanged), modes nearest (any
// dtype: moves bits), linear (f32/f16: bilinear in f32) and cubic (f32/f16: bicubic in f32, Keys'
// kernel with coefficient CUBIC_A, EXCLUDE_OUTSIDE zeroing taps outside the input). x_original = transform(x_resized,
// scale, lengths) is computed exactly in integers from the scale as a fraction p/q, then rounded
// (nearest) or split into two clamped neighbours and a weight (linear).
//   COORD: half_pixel, asymmetric, align_corners, pytorch_half_pixel, tf_half_pixel_for_nn
//   NEAREST_MODE: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil

struct Params {
  threads: u32,
  words_per_row: u32,
  run_length: u32,
  out_offset: u32,
  in_offset: u32,
  x_groups: u32,     // 32-bit elements: workgroups across an output row
  rows: u32,         // 32-bit elements: output rows (planes x out_h)
  _pad: u32,
  axis_h: vec4<u32>,                  // in, out, scale numerator, scale denominator (scale = out/in)
  axis_w: vec4<u32>,
}

@group(0) @binding(0) var<storage, read> in_buf: array<u32>;
@group(0) @binding(1) var<storage, read_write> out_buf: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

#include "layout/load_bits.wgsl"

// x_original = num / den exactly (integers), so nearest rounding and ties never depend on the
// adapter's float division: with scale = p / q,
//   asymmetric          x / scale               = x q / p
//   half_pixel          (x + 1/2) / scale - 1/2 = ((2x + 1) q - p) / (2p)
//   pytorch_half_pixel  half_pixel, or 0 when out == 1
//   tf_half_pixel_for_nn  (x + 1/2) / scale     = (2x + 1) q / (2p)
//   align_corners       x (in - 1) / (in scale - 1), or 0 when out == 1
// Returns (floor(num / den), num - floor * den, den).
fn original_position(x: u32, axis: vec4<u32>) -> vec3<i32> {
  let length_in = i32(axis.x);
  let length_out = i32(axis.y);
  let p = i32(axis.z);
  let q = i32(axis.w);
  let xi = i32(x);
  var num = 0;
  var den = 1;
#if COORD_ASYMMETRIC
  num = xi * q;
  den = p;
#endif
#if COORD_HALF_PIXEL
  num = (2 * xi + 1) * q - p;
  den = 2 * p;
#endif
#if COORD_PYTORCH_HALF_PIXEL
  if (length_out > 1) {
    num = (2 * xi + 1) * q - p;
    den = 2 * p;
  }
#endif
#if COORD_TF_HALF_PIXEL_FOR_NN
  num = (2 * xi + 1) * q;
  den = 2 * p;
#endif
#if COORD_ALIGN_CORNERS
  // ONNX divides by length_resized - 1 with length_resized = in * scale (not floored): with scale
  // p / q that is x (in - 1) q / (in p - q); for sizes (p = out, q = in) it is x (in - 1) / (out - 1).
  let d = length_in * p - q;
  if (d > 0 && length_out > 1) {
    num = xi * (length_in - 1) * q;
    den = d;
  }
#endif
  var whole = num / den;  // truncates toward zero
  if (num < 0 && whole * den != num) { whole = whole - 1; }
  return vec3<i32>(whole, num - whole * den, den);
}

fn nearest_index(x: u32, axis: vec4<u32>) -> u32 {
  let c = original_position(x, axis);
  var r = c.x;
#if NEAREST_ROUND_PREFER_FLOOR
  if (2 * c.y > c.z) { r = r + 1; }
#endif
#if NEAREST_ROUND_PREFER_CEIL
  if (2 * c.y >= c.z) { r = r + 1; }
#endif
#if NEAREST_CEIL
  if (c.y > 0) { r = r + 1; }
#endif
  return u32(clamp(r, 0, i32(axis.x) - 1));
}

// Linear: the two neighbours and the weight of the second; positions outside [0, in - 1] clamp.
struct LinearTaps {
  i0: u32,
  i1: u32,
  w: f32,
}

fn linear_taps(x: u32, axis: vec4<u32>) -> LinearTaps {
  let c = original_position(x, axis);
  let last = i32(axis.x) - 1;
  if (c.x < 0) { return LinearTaps(0u, 0u, 0.0); }
  if (c.x >= last) { return LinearTaps(u32(last), u32(last), 0.0); }
  return LinearTaps(u32(c.x), u32(c.x + 1), f32(c.y) / f32(c.z));
}

// Cubic: four taps floor(x) - 1 .. floor(x) + 2 (clamped to the edge, as ONNX's edge padding) and
// their weights at t = x - floor(x) (ONNX's _cubic_coeffs); with EXCLUDE_OUTSIDE a tap outside
// [0, in - 1] weighs 0 and the others are renormalized.
struct CubicTaps {
  first: i32,
  w: vec4<f32>,
}

fn cubic_taps(x: u32, axis: vec4<u32>) -> CubicTaps {
  let c = original_position(x, axis);
  let t = f32(c.y) / f32(c.z);
  let a = {{CUBIC_A}};
  let s = t + 1.0;
  let u = 1.0 - t;
  let v = u + 1.0;
  var w = vec4<f32>(((a * s - 5.0 * a) * s + 8.0 * a) * s - 4.0 * a,
                    ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0,
                    ((a + 2.0) * u - (a + 3.0)) * u * u + 1.0,
                    ((a * v - 5.0 * a) * v + 8.0 * a) * v - 4.0 * a);
#if EXCLUDE_OUTSIDE
  let length_in = i32(axis.x);
  for (var k = 0; k < 4; k = k + 1) {
    let at = c.x - 1 + k;
    if (at < 0 || at >= length_in) { w[k] = 0.0; }
  }
  w = w / (w.x + w.y + w.z + w.w);
#endif
  return CubicTaps(c.x - 1, w);
}

fn cubic_index(first: i32, k: i32, length_in: u32) -> u32 {
  return u32(clamp(first + k, 0, i32(length_in) - 1));
}

fn load_value(index: u32) -> f32 {
#if HALF
  return unpack2x16float(load_bits(index)).x;
#else
  return bitcast<f32>(load_bits(index));
#endif
}

// The bits of output element (y, x) of the plane whose input starts at element `plane`.
fn value_bits(plane: u32, y: u32, x: u32) -> u32 {
  let in_h = params.axis_h.x;
  let in_w = params.axis_w.x;
#if CUBIC
  let ty = cubic_taps(y, params.axis_h);
  let tx = cubic_taps(x, params.axis_w);
  var v = 0.0;
  for (var j = 0; j < 4; j = j + 1) {
    let row = plane + cubic_index(ty.first, j, in_h) * in_w;
    var across = 0.0;
    for (var i = 0; i < 4; i = i + 1) {
      across = across + tx.w[i] * load_value(row + cubic_index(tx.first, i, in_w));
    }
    v = v + ty.w[j] * across;
  }
#if HALF
  return pack2x16float(vec2<f32>(v, 0.0)) & 0xFFFFu;
#else
  return bitcast<u32>(v);
#endif
#else
#if LINEAR
  let ty = linear_taps(y, params.axis_h);
  let tx = linear_taps(x, params.axis_w);
  let top = mix(load_value(plane + ty.i0 * in_w + tx.i0), load_value(plane + ty.i0 * in_w + tx.i1), tx.w);
  let bottom = mix(load_value(plane + ty.i1 * in_w + tx.i0), load_value(plane + ty.i1 * in_w + tx.i1), tx.w);
  let v = mix(top, bottom, ty.w);
#if HALF
  return pack2x16float(vec2<f32>(v, 0.0)) & 0xFFFFu;
#else
  return bitcast<u32>(v);
#endif
#else
  return load_bits(plane + nearest_index(y, params.axis_h) * in_w + nearest_index(x, params.axis_w));
#endif
#endif
}

#if HALF
fn out_address(lin: u32) -> u32 { return params.out_offset + lin; }

fn source_bits(lin: u32) -> u32 {
  let out_h = params.axis_h.y;
  let out_w = params.axis_w.y;
  let plane = params.in_offset + (lin / (out_w * out_h)) * params.axis_h.x * params.axis_w.x;
  return value_bits(plane, (lin / out_w) % out_h, lin % out_w);
}

#include "layout/store_elements.wgsl"
#else
// 32-bit elements: a workgroup takes 64 columns of 4 output rows, so that an invocation divides only
// to find its row and plane, not to split a linear index (six integer divisions an element with the
// taps: UVR's 2x upsamplings ran at a fifth of the copy bandwidth on an H100).
@compute @workgroup_size(64, 4)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
  let group = wg.y * nwg.x + wg.x;
  let row = (group / params.x_groups) * 4u + lid.y;
  let x = (group % params.x_groups) * 64u + lid.x;
  let out_h = params.axis_h.y;
  let out_w = params.axis_w.y;
  if (row >= params.rows || x >= out_w) { return; }
  let plane = params.in_offset + (row / out_h) * params.axis_h.x * params.axis_w.x;
  out_buf[params.out_offset + row * out_w + x] = value_bits(plane, row % out_h, x);
}
#endif

