// Fused attention out = softmax(scale * Q K^T) V (attention.h), flash style: a workgroup takes BR
// query rows of one (batch, head), one invocation per row with its query (pre-scaled) and its
// output accumulator in registers as vec4s (the template's #for indexes them by constants only, so a
// GPU compiler keeps them out of local memory). The keys and values stream through workgroup memory
// in tiles of BC; each invocation keeps the online softmax of its row (Milakov & Gimelshein 2018):
// the running max m and sum l, the accumulator rescaled by exp(m_old - m_new) only when the max
// grows (rare after the first keys), so the [Lq, Lk] scores are never stored. Keys are taken four
// at a time (BC is a multiple of 4).
//   D4, DV4: head dims in vec4s (zero-padded past D and DV); K_TRANSPOSED: keys contiguous in k.
//   SPLIT: the keys are cut into params.splits slices of params.keys_per_split, a workgroup takes one
//   slice, and o is the f32 partials [splits, B, Lq, DV + 2]: the unnormalized accumulator, then m
//   and l (attention_combine.wgsl merges the slices). Without SPLIT, splits is 1 and o the output.
#include "attention/attention_common.wgsl"

const D4: u32 = {{D4}}u;
const BR: u32 = {{BR}}u;
const BC: u32 = {{BC}}u;

var<workgroup> k_tile: array<vec4<f32>, {{K_TILE}}>;  // BC * D4
var<workgroup> v_tile: array<vec4<f32>, {{V_TILE}}>;  // BC * DV4

@compute @workgroup_size({{BR}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row_blocks = (params.lq + BR - 1u) / BR;
  let group = wg.y * nwg.x + wg.x;
  if (group >= params.batch * params.splits * row_blocks) { return; }  // uniform per workgroup
  // Neighbouring workgroups take the row blocks of one key slice: they stream the same keys.
  let slice = (group / row_blocks) % params.splits;
  let b = group / (row_blocks * params.splits);
  let row = (group % row_blocks) * BR + lid;
  let key_begin = slice * params.keys_per_split;
  let key_end = min(params.lk, key_begin + params.keys_per_split);
  let in_range = row < params.lq;
  // Rows past lq still load their share of each tile.
  let q_row = min(row, params.lq - 1u);

  var q: array<vec4<f32>, {{D4}}>;
  var acc: array<vec4<f32>, {{DV4}}>;
#for c D4
  q[{{c}}] = params.scale * vec4<f32>(
      select(0.0, load_q(q_index(b, q_row, min(4u * {{c}}u + 0u, D - 1u))), 4u * {{c}}u + 0u < D),
      select(0.0, load_q(q_index(b, q_row, min(4u * {{c}}u + 1u, D - 1u))), 4u * {{c}}u + 1u < D),
      select(0.0, load_q(q_index(b, q_row, min(4u * {{c}}u + 2u, D - 1u))), 4u * {{c}}u + 2u < D),
      select(0.0, load_q(q_index(b, q_row, min(4u * {{c}}u + 3u, D - 1u))), 4u * {{c}}u + 3u < D));
#endfor
#for c DV4
  acc[{{c}}] = vec4<f32>(0.0);
#endfor
  var m = -0x1.fffffep+127;  // running max of the row's scores
  var l = 0.0;               // running sum of exp(score - m)

  for (var j0 = key_begin; j0 < key_end; j0 = j0 + BC) {
    let n = min(BC, key_end - j0);
    workgroupBarrier();  // the previous tile is consumed
#if K_TRANSPOSED
    // Consecutive invocations take consecutive keys: k is contiguous along the keys (K^T).
    for (var e = lid; e < BC * D4; e = e + BR) {
      let j = e % BC;
      let d = (e / BC) * 4u;
      var slot = vec4<f32>(0.0);
      if (j < n) {
        slot = vec4<f32>(key(b, j0 + j, d), key(b, j0 + j, d + 1u), key(b, j0 + j, d + 2u), key(b, j0 + j, d + 3u));
      }
      k_tile[j * D4 + d / 4u] = slot;
    }
#else
    for (var e = lid; e < BC * D4; e = e + BR) {
      let j = e / D4;
      let d = (e % D4) * 4u;
      var slot = vec4<f32>(0.0);
      if (j < n) {
        slot = vec4<f32>(key(b, j0 + j, d), key(b, j0 + j, d + 1u), key(b, j0 + j, d + 2u), key(b, j0 + j, d + 3u));
      }
      k_tile[e] = slot;
    }
#endif
    stage_values(b, j0, n, lid, BR);
    workgroupBarrier();
    if (in_range) {
      // Four keys at a time: four independent dot-product chains instead of one (a key's score is a
      // chain of D dependent multiply-adds), one max test and one vec4 exp per four keys. BC is a
      // multiple of 4 and the tile's slots past n are zero; their scores are masked out here.
      for (var j = 0u; j < n; j = j + 4u) {
        var s = vec4<f32>(0.0);
#for c D4
        s = s + vec4<f32>(dot(q[{{c}}], k_tile[j * D4 + {{c}}u]), dot(q[{{c}}], k_tile[(j + 1u) * D4 + {{c}}u]),
                          dot(q[{{c}}], k_tile[(j + 2u) * D4 + {{c}}u]), dot(q[{{c}}], k_tile[(j + 3u) * D4 + {{c}}u]));
#endfor
        s = select(vec4<f32>(-0x1.fffffep+127), s, j + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
        let s_max = max(max(s.x, s.y), max(s.z, s.w));
        if (s_max > m) {
          let correction = exp(m - s_max);
          l = l * correction;
#for c DV4
          acc[{{c}}] = acc[{{c}}] * correction;
#endfor
          m = s_max;
        }
        let p = exp(s - m);
        l = l + (p.x + p.y) + (p.z + p.w);
#for c DV4
        acc[{{c}}] = acc[{{c}}] + (p.x * v_tile[j * DV4 + {{c}}u] + p.y * v_tile[(j + 1u) * DV4 + {{c}}u]) +
                     (p.z * v_tile[(j + 2u) * DV4 + {{c}}u] + p.w * v_tile[(j + 3u) * DV4 + {{c}}u]);
#endfor
      }
    }
  }
  if (!in_range) { return; }
#if SPLIT
  let part_base = params.o_offset + ((slice * params.batch + b) * params.lq + row) * (DV + 2u);
#for c DV4
  if (4u * {{c}}u + 0u < DV) { store_o(part_base + 4u * {{c}}u + 0u, acc[{{c}}].x); }
  if (4u * {{c}}u + 1u < DV) { store_o(part_base + 4u * {{c}}u + 1u, acc[{{c}}].y); }
  if (4u * {{c}}u + 2u < DV) { store_o(part_base + 4u * {{c}}u + 2u, acc[{{c}}].z); }
  if (4u * {{c}}u + 3u < DV) { store_o(part_base + 4u * {{c}}u + 3u, acc[{{c}}].w); }
#endfor
  store_o(part_base + DV, m);
  store_o(part_base + DV + 1u, l);
#else
  let inv = 1.0 / l;
#for c DV4
  if (4u * {{c}}u + 0u < DV) { store_o(o_index(b, row, 4u * {{c}}u + 0u), acc[{{c}}].x * inv); }
  if (4u * {{c}}u + 1u < DV) { store_o(o_index(b, row, 4u * {{c}}u + 1u), acc[{{c}}].y * inv); }
  if (4u * {{c}}u + 2u < DV) { store_o(o_index(b, row, 4u * {{c}}u + 2u), acc[{{c}}].z * inv); }
  if (4u * {{c}}u + 3u < DV) { store_o(o_index(b, row, 4u * {{c}}u + 3u), acc[{{c}}].w * inv); }
#endfor
#endif
}
