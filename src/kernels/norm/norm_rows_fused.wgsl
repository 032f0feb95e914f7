// Normalization of rows that fit in one workgroup's registers (up to 16 values an invocation of 256,
// or 32 of 1024 where the device allows such workgroups): ROW_THREADS invocations per row (a whole
// workgroup for long rows) read the row once, compute the exact two-pass mean and variance from
// registers, and write the normalized row: one dispatch and one read, against the long-row path's two
// of each. L2: the row over its Euclidean norm instead (x / max(||x||, epsilon), an exported
// F.normalize; NormalizeSpec::l2).
#include "norm/norm_common.wgsl"
{{X_ACCESS}}
{{SCALE_ACCESS}}
{{BIAS_ACCESS}}
{{SLOPE_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: NormParams;

const PER_THREAD = {{PER_THREAD}}u;
const WORKGROUP = {{WORKGROUP}}u;
// Invocations per row, a power of two dividing WORKGROUP: short rows (LayerNorm over 64 channels) share a
// workgroup, so a row's reduction takes log2(ROW_THREADS) steps instead of 8 with 3/4 idle.
const ROW_THREADS = {{ROW_THREADS}}u;
const ROWS_PER_GROUP = WORKGROUP / ROW_THREADS;
var<workgroup> partial_sums: array<f32, WORKGROUP>;

// Sum over the ROW_THREADS invocations of the caller's row; every invocation reaches each barrier.
fn row_sum(lid: u32, value: f32) -> f32 {
  partial_sums[lid] = value;
  workgroupBarrier();
  let lane = lid % ROW_THREADS;
  for (var stride = ROW_THREADS / 2u; stride > 0u; stride = stride / 2u) {
    if (lane < stride) { partial_sums[lid] = partial_sums[lid] + partial_sums[lid + stride]; }
    workgroupBarrier();
  }
  let total = partial_sums[lid - lane];
  workgroupBarrier();
  return total;
}

// Elementwise ops fused after the normalization (kernels/elementwise/fused_elementwise.h).
{{EPILOGUE}}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let group = wg.y * nwg.x + wg.x;
  if (group * ROWS_PER_GROUP >= params.rows) { return; }  // uniform per workgroup
  let r = group * ROWS_PER_GROUP + lid / ROW_THREADS;
  let lane = lid % ROW_THREADS;
  let live = r < params.rows;  // the last workgroup's spare rows still take part in the barriers
  let base = r * params.row_size;
  var values: array<f32, PER_THREAD>;
  var sum = 0.0;
  for (var j = 0u; j < PER_THREAD; j = j + 1u) {
    let k = lane + j * ROW_THREADS;
    values[j] = 0.0;
    if (live && k < params.row_size) { values[j] = load_x(params.x_offset + base + k); }
    sum = sum + values[j];
  }
#if L2
  // x / max(||x||, epsilon): no centering; the padding values are zeros.
  var squares = 0.0;
  for (var j = 0u; j < PER_THREAD; j = j + 1u) { squares = squares + values[j] * values[j]; }
  let mean = 0.0;
  let rstd = 1.0 / max(sqrt(row_sum(lid, squares)), params.epsilon);
#else
  let mean = row_sum(lid, sum) / f32(params.row_size);
  var squares = 0.0;
  for (var j = 0u; j < PER_THREAD; j = j + 1u) {
    let k = lane + j * ROW_THREADS;
    if (live && k < params.row_size) { squares = squares + (values[j] - mean) * (values[j] - mean); }
  }
  let rstd = inverseSqrt(row_sum(lid, squares) / f32(params.row_size) + params.epsilon);
#endif
  var walk = affine_walk(r, lane);
  for (var j = 0u; j < PER_THREAD; j = j + 1u) {
    let k = lane + j * ROW_THREADS;
    if (j > 0u) { walk = affine_step(walk, ROW_THREADS, r, k); }
    if (live && k < params.row_size) {
      let a = affine_at(walk, r, k);
      var v = (values[j] - mean) * rstd;
#if HAS_SCALE
      v = v * load_scale(params.scale_offset + a);
#endif
#if HAS_BIAS
      v = v + load_bias(params.bias_offset + a);
#endif
#if HAS_SLOPE
      v = select(v * load_slope(params.slope_offset + a), v, v >= 0.0);
#endif
      store_y(params.y_offset + base + k, epilogue(v));
    }
  }
}
