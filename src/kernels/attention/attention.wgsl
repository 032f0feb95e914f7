// Fused attention out = softmax(scale * Q K^T) V (attention.h), flash style: a workgroup takes BR
// query rows of one (batch, head), BR invocations. LANES (1 or 2) neighbouring invocations share
// LANES rows: each holds its rows' queries (pre-scaled) and output accumulators for its share of
// the head dims (vec4 slots part, part + LANES, ...) in registers (the template's #for indexes them
// by constants only, so a GPU compiler keeps them out of local memory); with two lanes the partial
// scores are summed across the pair with subgroupShuffleXor (neighbouring invocations of a 1-D
// workgroup are one subgroup's neighbouring lanes on every Vulkan / Metal / D3D driver, as
// gemm_skinny.wgsl's reduction assumes too). Why two: the keys and values stream through workgroup
// memory in tiles of BC, and a pair makes every 16-byte load of a key or value feed two rows'
// multiply-adds instead of one (measured in attention.h).
// Each invocation keeps the online softmax of its rows (Milakov & Gimelshein 2018): running max m
// and sum l (identical in both invocations of a pair: a + b == b + a), the accumulators rescaled by
// exp(m_old - m_new) only when the max grows (rare after the first keys), so the [Lq, Lk] scores are
// never stored. Keys are taken four at a time (BC is a multiple of 4).
//   D4, DV4: head dims in vec4s (zero-padded past D and DV, to a multiple of LANES); K_TRANSPOSED:
//   keys contiguous in k; SUBGROUPS: LANES = 2.
//   SPLIT: the keys are cut into params.splits slices of params.keys_per_split, a workgroup takes one
//   slice, and o is the f32 partials [splits, B, Lq, DV + 2]: the unnormalized accumulator, then m
//   and l (attention_combine.wgsl merges the slices). Without SPLIT, splits is 1 and o the output.
#if SUBGROUPS
enable subgroups;
#endif
#include "attention/attention_common.wgsl"

const D4: u32 = {{D4}}u;
const BR: u32 = {{BR}}u;
const BC: u32 = {{BC}}u;
const LANES: u32 = {{LANES}}u;
const DS4: u32 = {{DS4}}u;    // D4 / LANES: query vec4s of one row in one invocation
const DVS4: u32 = {{DVS4}}u;  // DV4 / LANES: accumulator vec4s of one row in one invocation

var<workgroup> k_tile: array<vec4<f32>, {{K_TILE}}>;  // BC * D4
var<workgroup> v_tile: array<vec4<f32>, {{V_TILE}}>;  // BC * DV4

// Elements d .. d + 3 of query row r of batch row b (zero past D).
fn query4(b: u32, r: u32, d: u32) -> vec4<f32> {
  return vec4<f32>(select(0.0, load_q(q_index(b, r, min(d, D - 1u))), d < D),
                   select(0.0, load_q(q_index(b, r, min(d + 1u, D - 1u))), d + 1u < D),
                   select(0.0, load_q(q_index(b, r, min(d + 2u, D - 1u))), d + 2u < D),
                   select(0.0, load_q(q_index(b, r, min(d + 3u, D - 1u))), d + 3u < D));
}

@compute @workgroup_size({{BR}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row_blocks = (params.lq + BR - 1u) / BR;
  let group = wg.y * nwg.x + wg.x;
  if (group >= params.batch * params.splits * row_blocks) { return; }  // uniform per workgroup
  // Neighbouring workgroups take the row blocks of one key slice: they stream the same keys.
  let slice = (group / row_blocks) % params.splits;
  let b = group / (row_blocks * params.splits);
  let part = lid % LANES;
  let first_row = (group % row_blocks) * BR + lid - part;  // this invocation's rows: first_row + i, i < LANES
  let key_begin = slice * params.keys_per_split;
  let key_end = min(params.lk, key_begin + params.keys_per_split);

  // Rows past lq compute on the last row (every invocation takes part in the shuffles and the
  // tile loads) and store nothing.
  var q: array<vec4<f32>, D4>;   // [row i][slot c]: head-dim vec4 c LANES + part of row i
  var acc: array<vec4<f32>, DV4>;
#for i LANES
#for c DS4
  q[{{i}}u * DS4 + {{c}}u] = params.scale * query4(b, min(first_row + {{i}}u, params.lq - 1u), 4u * ({{c}}u * LANES + part));
#endfor
#endfor
#for c DV4
  acc[{{c}}] = vec4<f32>(0.0);
#endfor
  var m = vec2<f32>(-0x1.fffffep+127);  // running max of row i's scores, component i
  var l = vec2<f32>(0.0);               // running sum of exp(score - m)

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
    // Four keys at a time: four independent dot-product chains per row instead of one (a key's score
    // is a chain of D dependent multiply-adds), one max test and one vec4 exp per four keys and row.
    // BC is a multiple of 4 and the tile's slots past n are zero; their scores are masked out here.
    // n is uniform across the workgroup, so every invocation reaches the shuffles.
    for (var j = 0u; j < n; j = j + 4u) {
#for i LANES
      var s{{i}} = vec4<f32>(0.0);
#endfor
#for c DS4
      {
        let slot = {{c}}u * LANES + part;
        let k0 = k_tile[j * D4 + slot];
        let k1 = k_tile[(j + 1u) * D4 + slot];
        let k2 = k_tile[(j + 2u) * D4 + slot];
        let k3 = k_tile[(j + 3u) * D4 + slot];
#for i LANES
        {
          // One multiply-add chain per key: no separate products and sums (fewer instructions).
          let qv = q[{{i}}u * DS4 + {{c}}u];
          s{{i}}.x = fma(qv.w, k0.w, fma(qv.z, k0.z, fma(qv.y, k0.y, fma(qv.x, k0.x, s{{i}}.x))));
          s{{i}}.y = fma(qv.w, k1.w, fma(qv.z, k1.z, fma(qv.y, k1.y, fma(qv.x, k1.x, s{{i}}.y))));
          s{{i}}.z = fma(qv.w, k2.w, fma(qv.z, k2.z, fma(qv.y, k2.y, fma(qv.x, k2.x, s{{i}}.z))));
          s{{i}}.w = fma(qv.w, k3.w, fma(qv.z, k3.z, fma(qv.y, k3.y, fma(qv.x, k3.x, s{{i}}.w))));
        }
#endfor
      }
#endfor
      let live = j + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n);
#for i LANES
#if SUBGROUPS
      s{{i}} = s{{i}} + subgroupShuffleXor(s{{i}}, 1u);
#endif
      s{{i}} = select(vec4<f32>(-0x1.fffffep+127), s{{i}}, live);
      {
        let s_max = max(max(s{{i}}.x, s{{i}}.y), max(s{{i}}.z, s{{i}}.w));
        if (s_max > m[{{i}}]) {
          let correction = exp(m[{{i}}] - s_max);
          l[{{i}}] = l[{{i}}] * correction;
#for c DVS4
          acc[{{i}}u * DVS4 + {{c}}u] = acc[{{i}}u * DVS4 + {{c}}u] * correction;
#endfor
          m[{{i}}] = s_max;
        }
      }
      let p{{i}} = exp(s{{i}} - m[{{i}}]);
      l[{{i}}] = l[{{i}}] + (p{{i}}.x + p{{i}}.y) + (p{{i}}.z + p{{i}}.w);
#endfor
#for c DVS4
      {
        let slot = {{c}}u * LANES + part;
        let v0 = v_tile[j * DV4 + slot];
        let v1 = v_tile[(j + 1u) * DV4 + slot];
        let v2 = v_tile[(j + 2u) * DV4 + slot];
        let v3 = v_tile[(j + 3u) * DV4 + slot];
#for i LANES
        acc[{{i}}u * DVS4 + {{c}}u] = fma(vec4<f32>(p{{i}}.w), v3, fma(vec4<f32>(p{{i}}.z), v2,
            fma(vec4<f32>(p{{i}}.y), v1, fma(vec4<f32>(p{{i}}.x), v0, acc[{{i}}u * DVS4 + {{c}}u]))));
#endfor
      }
#endfor
    }
  }
#for i LANES
  if (first_row + {{i}}u < params.lq) {
    let row = first_row + {{i}}u;
#if SPLIT
    let part_base = params.o_offset + ((slice * params.batch + b) * params.lq + row) * (DV + 2u);
#for c DVS4
    {
      let d = 4u * ({{c}}u * LANES + part);
      let a = acc[{{i}}u * DVS4 + {{c}}u];
      if (d < DV) { store_o(part_base + d, a.x); }
      if (d + 1u < DV) { store_o(part_base + d + 1u, a.y); }
      if (d + 2u < DV) { store_o(part_base + d + 2u, a.z); }
      if (d + 3u < DV) { store_o(part_base + d + 3u, a.w); }
    }
#endfor
    if (part == 0u) {
      store_o(part_base + DV, m[{{i}}]);
      store_o(part_base + DV + 1u, l[{{i}}]);
    }
#else
    let inv = 1.0 / l[{{i}}];
#for c DVS4
    {
      let d = 4u * ({{c}}u * LANES + part);
      let a = acc[{{i}}u * DVS4 + {{c}}u];
      if (d < DV) { store_o(o_index(b, row, d), a.x * inv); }
      if (d + 1u < DV) { store_o(o_index(b, row, d + 1u), a.y * inv); }
      if (d + 2u < DV) { store_o(o_index(b, row, d + 2u), a.z * inv); }
      if (d + 3u < DV) { store_o(o_index(b, row, d + 3u), a.w * inv); }
    }
#endfor
#endif
  }
#endfor
}
