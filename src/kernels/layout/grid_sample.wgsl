// GridSample (layout/grid_sample.h): one invocation per output element (n, c, o1..or). Its grid
// point is unnormalized and padded per spatial dim, then each dim contributes TAPS indices with
// weights (nearest 1, linear 2, cubic 4) and the output is the sum over every combination of taps
// of the product of their weights times the input there (a padded-out tap, with zeros padding,
// reads 0). MODE: 0 nearest, 1 linear, 2 cubic; PADDING: 0 zeros, 1 border, 2 reflection.
{{X_ACCESS}}
{{GRID_ACCESS}}
{{Y_ACCESS}}

const MODE: u32 = {{MODE}}u;
const PADDING: u32 = {{PADDING}}u;
const TAPS: u32 = {{TAPS}}u;
const CUBIC_A: f32 = -0.75;

struct Params {
  count: u32,
  channels: u32,
  rank: u32,            // spatial dims r
  align_corners: u32,
  x_offset: u32,
  grid_offset: u32,
  y_offset: u32,
  _pad: u32,
  in_size: vec4<u32>,   // D1..Dr
  out_size: vec4<u32>,  // O1..Or
}
@group(0) @binding(3) var<uniform> params: Params;

// Mirrors x into [low, high] (the ONNX reference's _gs_reflect); a single-element axis has nothing
// to mirror against.
fn reflect(x: f32, low: f32, high: f32) -> f32 {
  let range = high - low;
  if (range <= 0.0) { return low; }
  if (x < low) {
    let dx = low - x;
    let n = floor(dx / range);
    let r = dx - n * range;
    return select(high - r, low + r, n % 2.0 == 0.0);
  }
  if (x > high) {
    let dx = x - high;
    let n = floor(dx / range);
    let r = dx - n * range;
    return select(low + r, high - r, n % 2.0 == 0.0);
  }
  return x;
}

fn low_border(size: u32) -> f32 {
  return select(-0.5, 0.0, params.align_corners != 0u);
}

fn high_border(size: u32) -> f32 {
  return select(f32(size) - 0.5, f32(size) - 1.0, params.align_corners != 0u);
}

// The element index a tap at `i` reads along an axis of `size`, or -1 for zeros.
fn padded_index(i: i32, size: u32) -> i32 {
  let last = i32(size) - 1;
  if (PADDING == 0u) {
    return select(-1, i, i >= 0 && i <= last);
  }
  if (PADDING == 1u) {
    return clamp(i, 0, last);
  }
  return clamp(i32(round(reflect(f32(i), low_border(size), high_border(size)))), 0, last);
}

fn cubic_weights(t: f32) -> vec4<f32> {
  let a = CUBIC_A;
  let x0 = t + 1.0;
  let x3 = 2.0 - t;
  return vec4<f32>(((a * x0 - 5.0 * a) * x0 + 8.0 * a) * x0 - 4.0 * a,
                   ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0,
                   ((a + 2.0) * (1.0 - t) - (a + 3.0)) * (1.0 - t) * (1.0 - t) + 1.0,
                   ((a * x3 - 5.0 * a) * x3 + 8.0 * a) * x3 - 4.0 * a);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let linear = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (linear >= params.count) { return; }
  let rank = params.rank;
  // Output coordinates: linear = ((n * C + c) * O1 + o1) ... * Or + or.
  var rest = linear;
  var out_point = 0u;  // (n, o1..or) flattened: the grid point's index
  var point_stride = 1u;
  for (var d = i32(rank) - 1; d >= 0; d = d - 1) {
    let size = params.out_size[d];
    out_point = out_point + (rest % size) * point_stride;
    point_stride = point_stride * size;
    rest = rest / size;
  }
  let c = rest % params.channels;
  let n = rest / params.channels;
  out_point = out_point + n * point_stride;

  var index: array<array<i32, 4>, 3>;
  var weight: array<array<f32, 4>, 3>;
  for (var d = 0u; d < rank; d = d + 1u) {
    let size = params.in_size[d];
    // Grid component rank - 1 - d holds dim d's coordinate.
    let g = load_grid(params.grid_offset + out_point * rank + (rank - 1u - d));
    var x = select(((g + 1.0) * f32(size) - 1.0) * 0.5, (g + 1.0) * 0.5 * f32(size - 1u),
                   params.align_corners != 0u);
    if (MODE == 0u) { x = round(x); }
    let low = low_border(size);
    let high = high_border(size);
    if (x < low || x > high) {
      if (PADDING == 1u) { x = clamp(x, 0.0, f32(size) - 1.0); }
      if (PADDING == 2u) { x = reflect(x, low, high); }
    }
    if (MODE == 0u) {
      index[d][0] = padded_index(i32(trunc(x)), size);
      weight[d][0] = 1.0;
    } else {
      let x0 = floor(x);
      let t = x - x0;
      if (MODE == 1u) {
        index[d][0] = padded_index(i32(x0), size);
        index[d][1] = padded_index(i32(x0) + 1, size);
        weight[d][0] = 1.0 - t;
        weight[d][1] = t;
      } else {
        let w = cubic_weights(t);
        for (var k = 0u; k < 4u; k = k + 1u) {
          index[d][k] = padded_index(i32(x0) - 1 + i32(k), size);
          weight[d][k] = w[k];
        }
      }
    }
  }
  let channel_base = (n * params.channels + c);
  var combos = 1u;
  for (var d = 0u; d < rank; d = d + 1u) { combos = combos * TAPS; }
  var sum = 0.0;
  for (var combo = 0u; combo < combos; combo = combo + 1u) {
    var digits = combo;
    var address = channel_base;
    var w = 1.0;
    var inside = true;
    for (var d = 0u; d < rank; d = d + 1u) {
      let k = digits % TAPS;
      digits = digits / TAPS;
      let i = index[d][k];
      inside = inside && i >= 0;
      address = address * params.in_size[d] + u32(max(i, 0));
      w = w * weight[d][k];
    }
    if (inside) { sum = sum + w * load_x(params.x_offset + address); }
  }
  store_y(params.y_offset + linear, sum);
}
