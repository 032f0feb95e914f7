// Softmax / LogSoftmax of rows of at most 16 * 256 elements (x viewed as [outer, K], K contiguous),
// each row held in registers: reads x once and writes y once (softmax.wgsl's row kernel reads x
// twice and reduces with a full 256-wide tree per row: MP-SENet's attention, 129684 rows of 321,
// ran at a quarter of the H200's bandwidth).
//
// A workgroup of 256 invocations takes RPW = 256 / RT rows; the RT invocations of a row hold V
// values each (element t + i * RT of the row in v_i: consecutive invocations read consecutive
// elements), reduce the max and then the sum of exp over the row (subgroup shuffles when a
// subgroup holds whole rows: SUBGROUP_REDUCE; else a tree in workgroup memory), and write.
// Rendered with X_ACCESS, Y_ACCESS, LOG_SOFTMAX, RT (a power of two <= 256), V, SUBGROUP_REDUCE.
#if SUBGROUP_REDUCE
enable subgroups;
#endif
#include "softmax/softmax_params.wgsl"

const RT: u32 = {{RT}}u;
const RPW: u32 = 256u / RT;
const LOWEST: f32 = -0x1.fffffep+127;

#if SUBGROUP_REDUCE
#else
var<workgroup> red: array<f32, 256>;
#endif

// The max (is_max) or the sum of v over the RT invocations of this row, in each of them.
fn row_reduce(v: f32, lid: u32, is_max: bool) -> f32 {
#if SUBGROUP_REDUCE
  var r = v;
  for (var o = 1u; o < RT; o <<= 1u) {
    let other = subgroupShuffleXor(r, o);
    r = select(r + other, max(r, other), is_max);
  }
  return r;
#else
  red[lid] = v;
  workgroupBarrier();
  let t = lid % RT;
  for (var stride = RT / 2u; stride > 0u; stride >>= 1u) {
    if (t < stride) {
      let a = red[lid];
      let b = red[lid + stride];
      red[lid] = select(a + b, max(a, b), is_max);
    }
    workgroupBarrier();
  }
  let r = red[lid - t];
  workgroupBarrier();
  return r;
#endif
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = (wg.y * nwg.x + wg.x) * RPW + lid / RT;
  let t = lid % RT;
  let live = row < params.outer;  // rows past the end still join the reductions (barriers)
  let base = row * params.size;
  let size = params.size;

  var m = LOWEST;
#for i V
  var v_{{i}} = LOWEST;
  if (live && t + {{i}}u * RT < size) {
    v_{{i}} = load_x(params.x_offset + base + t + {{i}}u * RT);
  }
  m = max(m, v_{{i}});
#endfor
  m = row_reduce(m, lid, true);

  var s = 0.0;
#for i V
  if (t + {{i}}u * RT < size) {
    s += exp(v_{{i}} - m);
  }
#endfor
  s = row_reduce(s, lid, false);

  if (live) {
#for i V
    if (t + {{i}}u * RT < size) {
#if LOG_SOFTMAX
      store_y(params.y_offset + base + t + {{i}}u * RT, v_{{i}} - m - log(s));
#else
      store_y(params.y_offset + base + t + {{i}}u * RT, exp(v_{{i}} - m) / s);
#endif
    }
#endfor
  }
}
