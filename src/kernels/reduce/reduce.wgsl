// Reduction of x viewed as [outer, R, inner] over R, for the ONNX Reduce* ops, Softmax's
// statistics and partial results of multi-pass reductions. Two layouts:
//   INNER_ONE (inner == 1, rows contiguous): workgroup (row, chunk) reduces `chunk_size` elements
//     with coalesced loads and a workgroup tree; with several chunks it writes partials that a
//     second pass (PARTIAL_INPUT) combines.
//   otherwise: one invocation per (outer, inner) column walks R with stride `inner` (coalesced
//     across neighbouring columns).
// The op is three template expressions over f32: PRE(x) maps an element (x, x*x, |x|), COMBINE(a, b)
// folds, FINAL(acc, n) finishes (mean, sqrt); IDENTITY starts the fold.
{{X_ACCESS}}
{{Y_ACCESS}}

struct ReduceParams {
  outer: u32,
  reduce: u32,        // R
  inner: u32,
  chunk_size: u32,
  chunks: u32,
  x_offset: u32,
  y_offset: u32,
  final_count: f32,   // elements behind each output (all passes), for FINAL
}
@group(0) @binding(2) var<uniform> params: ReduceParams;

fn pre(x: f32) -> f32 {
#if PARTIAL_INPUT
  return x;
#else
  return {{PRE}};
#endif
}

fn combine(a: f32, b: f32) -> f32 { return {{COMBINE}}; }

fn finish(acc: f32) -> f32 {
#if APPLY_FINAL
  let n = params.final_count;
  return {{FINAL}};
#else
  return acc;
#endif
}

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let group = wg.y * nwg.x + wg.x;
#if INNER_ONE
  if (group >= params.outer * params.chunks) { return; }  // uniform per workgroup
  let row = group / params.chunks;
  let chunk = group % params.chunks;
  let begin = chunk * params.chunk_size;
  let end = min(begin + params.chunk_size, params.reduce);
  let base = params.x_offset + row * params.reduce;
  var acc = {{IDENTITY}};
  for (var k = begin + lid; k < end; k = k + 256u) { acc = combine(acc, pre(load_x(base + k))); }
  partial[lid] = acc;
  workgroupBarrier();
  for (var stride = 128u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { partial[lid] = combine(partial[lid], partial[lid + stride]); }
    workgroupBarrier();
  }
  if (lid == 0u) {
    // With one chunk the row is done; otherwise this is a partial for the next pass.
    store_y(params.y_offset + group, select(partial[0], finish(partial[0]), params.chunks == 1u));
  }
#else
  let column = group * 256u + lid;
  if (column >= params.outer * params.inner) { return; }
  let o = column / params.inner;
  let i = column % params.inner;
  let base = params.x_offset + o * params.reduce * params.inner + i;
  var acc = {{IDENTITY}};
  for (var k = 0u; k < params.reduce; k = k + 1u) { acc = combine(acc, pre(load_x(base + k * params.inner))); }
  store_y(params.y_offset + column, finish(acc));
#endif
}
