// Fused attention out = softmax(scale * Q K^T) V (attention.h) as two register-tiled products per key
// tile, flash style: a workgroup of 128 invocations takes BR = 64 query rows of one (batch, head) and
// streams the keys in tiles of BC. Per tile:
//   1. S = Q K^T (64 x BC): each invocation holds a 4-row x 4*KG-key block of S in registers, the
//      head dim staged through workgroup memory 16 dims at a time (Qs, Ks: [dim][rows] and
//      [dim][keys], so one vec4 load gives four rows or four keys: 4 x 4*KG multiply-adds per
//      1 + KG loads, where one invocation per row (attention.wgsl) does 4 per load);
//   2. S goes to workgroup memory P [key][row] (over Qs and Ks, which are done), masked past Lk;
//   3. one invocation per row takes the online softmax of its row of P (Milakov & Gimelshein 2018:
//      running max m and sum l in registers), writes P = exp(S - m) and the factor corr that rescales
//      the row's earlier sum;
//   4. O = corr * O + P V: each invocation holds a 4-row x 4*DVG-column block of O in registers.
// The [Lq, Lk] scores never reach memory. Rows past Lq compute on zeros and store nothing.
//   DP: head dim D padded to 16 (the staging step); DVG: vec4 columns of O per invocation (DV padded
//   to 32, 8 invocations across); KG: vec4 key groups per invocation (BC = 32 * KG).
{{Q_ACCESS}}
{{K_ACCESS}}
{{V_ACCESS}}
{{O_ACCESS}}

struct AttentionParams {
  batch: u32,
  lq: u32,
  lk: u32,
  scale: f32,
  q_offset: u32,
  k_offset: u32,
  v_offset: u32,
  o_offset: u32,
}
@group(0) @binding(4) var<uniform> params: AttentionParams;

const D: u32 = {{D}}u;
const DV: u32 = {{DV}}u;
const DP: u32 = {{DP}}u;
const KG: u32 = {{KG}}u;
const DVG: u32 = {{DVG}}u;
const BR: u32 = 64u;
const BC: u32 = 32u * KG;
const BR4: u32 = BR / 4u;
const QS4: u32 = BR4 + 1u;        // a staged dim's rows in vec4s, one spare against bank conflicts
const KS4: u32 = BC / 4u + 1u;    // a staged dim's keys in vec4s, likewise
const DV4P: u32 = 8u * DVG;       // a value row in vec4s (DV padded to 32)
const LOWEST: f32 = -0x1.fffffep+127;

// Qs = tile[0 .. 16 * QS4), Ks = tile[16 * QS4 ..) while S is computed; P = tile[0 .. BC * BR4) after.
var<workgroup> tile: array<vec4<f32>, {{TILE}}>;
var<workgroup> v_tile: array<vec4<f32>, {{V_TILE}}>;  // BC * DV4P
var<workgroup> corr: array<f32, 64>;                    // the rows' rescale factors of this key tile

fn value(b: u32, j: u32, c: u32) -> f32 {
  if (c >= DV) { return 0.0; }
  return load_v(params.v_offset + (b * params.lk + j) * DV + c);
}

fn key(b: u32, j: u32, d: u32) -> f32 {
#if K_TRANSPOSED
  return load_k(params.k_offset + (b * D + d) * params.lk + j);
#else
  return load_k(params.k_offset + (b * params.lk + j) * D + d);
#endif
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row_blocks = (params.lq + BR - 1u) / BR;
  let group = wg.y * nwg.x + wg.x;
  if (group >= params.batch * row_blocks) { return; }  // uniform per workgroup
  let b = group / row_blocks;
  let row0 = (group % row_blocks) * BR;
  // This invocation's blocks: rows 4 tr .. 4 tr + 3 of S and O; keys 4 (tc + 8 g) .. + 3 of S and
  // vec4 columns tc + 8 g of O.
  let tr = lid % 16u;
  let tc = lid / 16u;

  var o: array<vec4<f32>, {{O_REGS}}>;  // o[i * DVG + g]
#for c O_REGS
  o[{{c}}] = vec4<f32>(0.0);
#endfor
  var m = LOWEST;  // softmax state of row lid (lid < 64)
  var l = 0.0;

  for (var j0 = 0u; j0 < params.lk; j0 = j0 + BC) {
    let n = min(BC, params.lk - j0);
    var s: array<vec4<f32>, {{S_REGS}}>;  // s[i * KG + g]: row 4 tr + i, keys 4 (tc + 8 g) ..
#for c S_REGS
    s[{{c}}] = vec4<f32>(0.0);
#endfor
    for (var d0 = 0u; d0 < DP; d0 = d0 + 16u) {
      workgroupBarrier();  // the previous staging (or the previous tile's P and V) is consumed
      for (var e = lid; e < 16u * BR; e = e + 128u) {
        let d = e % 16u;
        let r = e / 16u;
        var x = 0.0;
        if (d0 + d < D && row0 + r < params.lq) {
          x = params.scale * load_q(params.q_offset + (b * params.lq + row0 + r) * D + d0 + d);
        }
        tile[d * QS4 + r / 4u][r % 4u] = x;
      }
      for (var e = lid; e < 16u * BC; e = e + 128u) {
#if K_TRANSPOSED
        let j = e % BC;
        let d = e / BC;
#else
        let d = e % 16u;
        let j = e / 16u;
#endif
        var x = 0.0;
        if (d0 + d < D && j < n) { x = key(b, j0 + j, d0 + d); }
        tile[16u * QS4 + d * KS4 + j / 4u][j % 4u] = x;
      }
      if (d0 == 0u) {
        for (var e = lid; e < BC * DV4P; e = e + 128u) {
          let j = e / DV4P;
          let c = (e % DV4P) * 4u;
          var x = vec4<f32>(0.0);
          if (j < n) {
            x = vec4<f32>(value(b, j0 + j, c), value(b, j0 + j, c + 1u), value(b, j0 + j, c + 2u),
                          value(b, j0 + j, c + 3u));
          }
          v_tile[e] = x;
        }
      }
      workgroupBarrier();
      for (var d = 0u; d < 16u; d = d + 1u) {
        let qv = tile[d * QS4 + tr];
#for g KG
        {
          let kv = tile[16u * QS4 + d * KS4 + tc + 8u * {{g}}u];
          s[0u * KG + {{g}}u] = s[0u * KG + {{g}}u] + qv.x * kv;
          s[1u * KG + {{g}}u] = s[1u * KG + {{g}}u] + qv.y * kv;
          s[2u * KG + {{g}}u] = s[2u * KG + {{g}}u] + qv.z * kv;
          s[3u * KG + {{g}}u] = s[3u * KG + {{g}}u] + qv.w * kv;
        }
#endfor
      }
    }
    workgroupBarrier();  // Qs and Ks are consumed: P takes their place
#for g KG
    {
      let k4 = 4u * (tc + 8u * {{g}}u);
      let valid = vec4<u32>(k4) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n);
      let r0 = select(vec4<f32>(LOWEST), s[0u * KG + {{g}}u], valid);
      let r1 = select(vec4<f32>(LOWEST), s[1u * KG + {{g}}u], valid);
      let r2 = select(vec4<f32>(LOWEST), s[2u * KG + {{g}}u], valid);
      let r3 = select(vec4<f32>(LOWEST), s[3u * KG + {{g}}u], valid);
      tile[(k4 + 0u) * BR4 + tr] = vec4<f32>(r0.x, r1.x, r2.x, r3.x);
      tile[(k4 + 1u) * BR4 + tr] = vec4<f32>(r0.y, r1.y, r2.y, r3.y);
      tile[(k4 + 2u) * BR4 + tr] = vec4<f32>(r0.z, r1.z, r2.z, r3.z);
      tile[(k4 + 3u) * BR4 + tr] = vec4<f32>(r0.w, r1.w, r2.w, r3.w);
    }
#endfor
    workgroupBarrier();
    if (lid < BR) {
      // Row lid's online softmax over this tile's n keys (keys past n hold LOWEST and are skipped).
      var m_new = m;
      for (var j = 0u; j < n; j = j + 1u) { m_new = max(m_new, tile[j * BR4 + lid / 4u][lid % 4u]); }
      var sum = 0.0;
      for (var j = 0u; j < BC; j = j + 1u) {
        let p = select(0.0, exp(tile[j * BR4 + lid / 4u][lid % 4u] - m_new), j < n);
        tile[j * BR4 + lid / 4u][lid % 4u] = p;
        sum = sum + p;
      }
      let factor = exp(m - m_new);
      l = l * factor + sum;
      m = m_new;
      corr[lid] = factor;
    }
    workgroupBarrier();
#for i 4
    {
      let f = corr[4u * tr + {{i}}u];
#for g DVG
      o[{{i}}u * DVG + {{g}}u] = o[{{i}}u * DVG + {{g}}u] * f;
#endfor
    }
#endfor
    for (var j = 0u; j < n; j = j + 1u) {
      let pv = tile[j * BR4 + tr];
#for g DVG
      {
        let vv = v_tile[j * DV4P + tc + 8u * {{g}}u];
        o[0u * DVG + {{g}}u] = o[0u * DVG + {{g}}u] + pv.x * vv;
        o[1u * DVG + {{g}}u] = o[1u * DVG + {{g}}u] + pv.y * vv;
        o[2u * DVG + {{g}}u] = o[2u * DVG + {{g}}u] + pv.z * vv;
        o[3u * DVG + {{g}}u] = o[3u * DVG + {{g}}u] + pv.w * vv;
      }
#endfor
    }
  }
  // The rows' sums go through workgroup memory to the invocations that hold their outputs.
  workgroupBarrier();
  if (lid < BR) { corr[lid] = 1.0 / l; }
  workgroupBarrier();
#for i 4
  {
    let row = row0 + 4u * tr + {{i}}u;
    if (row < params.lq) {
      let inv = corr[4u * tr + {{i}}u];
      let o_base = params.o_offset + (b * params.lq + row) * DV;
#for g DVG
      {
        let c = 4u * (tc + 8u * {{g}}u);
        let x = o[{{i}}u * DVG + {{g}}u] * inv;
        if (c + 0u < DV) { store_o(o_base + c + 0u, x.x); }
        if (c + 1u < DV) { store_o(o_base + c + 1u, x.y); }
        if (c + 2u < DV) { store_o(o_base + c + 2u, x.z); }
        if (c + 3u < DV) { store_o(o_base + c + 3u, x.w); }
      }
#endfor
    }
  }
#endfor
}
