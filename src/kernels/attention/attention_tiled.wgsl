// Fused attention (attention.h) with register tiles, flash-attention-2 style: a workgroup takes BR =
// 4 RG query rows of one (batch, head) and RG x 8 invocations. Invocation (tr, tc) holds rows
// 4 tr .. 4 tr + 3: of each tile of 32 keys its scores of keys 4 tc .. 4 tc + 3 (S = Q K^T as outer
// products of a vec4 of rows and a vec4 of keys per head dim), and of the output the vec4 columns
// tc + 8 g. Every workgroup-memory load feeds 8-11 multiply-adds, where the one-row-per-invocation
// kernel (attention.wgsl) does 4 (its loads are broadcasts of one key). The online softmax's running
// max m of a row is the same in the 8 invocations of the row (one exchange per tile through `red`);
// its sum l stays split over them until the end.
//   Q staged once, head dim major and pre-scaled; K staged per tile, head dim major; P replaces K once
//   S is computed; V row major. SPLIT: as attention.wgsl (key slices, partials [splits, B, Lq, DV + 2]).
#include "attention/attention_common.wgsl"

const DVG: u32 = {{DVG}}u;   // vec4 output columns per invocation: ceil(DV4 / 8)
const RG: u32 = {{RG}}u;     // row groups of 4
const BR: u32 = 4u * RG;
const BC: u32 = 32u;
const THREADS: u32 = 8u * RG;
const LOWEST: f32 = -0x1.fffffep+127;

var<workgroup> q_tile: array<vec4<f32>, {{Q_TILE}}>;    // [D][RG]: 4 rows of one head dim
var<workgroup> kp_tile: array<vec4<f32>, {{KP_TILE}}>;  // K [D][8]: 4 keys of one dim; then P [BC][RG]
var<workgroup> v_tile: array<vec4<f32>, {{V_TILE}}>;    // [BC][DV4]
var<workgroup> red: array<vec4<f32>, {{RED}}>;          // [8][RG]: per-invocation row maxima, sums

@compute @workgroup_size({{THREADS}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row_blocks = (params.lq + BR - 1u) / BR;
  let group = wg.y * nwg.x + wg.x;
  if (group >= params.batch * params.splits * row_blocks) { return; }  // uniform per workgroup
  let slice = (group / row_blocks) % params.splits;
  let b = group / (row_blocks * params.splits);
  let row0 = (group % row_blocks) * BR;
  let key_begin = slice * params.keys_per_split;
  let key_end = min(params.lk, key_begin + params.keys_per_split);
  let tr = lid % RG;
  let tc = lid / RG;

  // Q once: rows past lq read row lq - 1 (their results are not stored).
  for (var e = lid; e < D * RG; e = e + THREADS) {
    let r = 4u * (e % RG);
    let d = e / RG;
    q_tile[e] = params.scale * vec4<f32>(load_q(q_index(b, min(row0 + r + 0u, params.lq - 1u), d)),
                                         load_q(q_index(b, min(row0 + r + 1u, params.lq - 1u), d)),
                                         load_q(q_index(b, min(row0 + r + 2u, params.lq - 1u), d)),
                                         load_q(q_index(b, min(row0 + r + 3u, params.lq - 1u), d)));
  }

  var o: array<vec4<f32>, {{O_REGS}}>;  // o[i * DVG + g]: row 4 tr + i, columns 4 (tc + 8 g) ..
#for c O_REGS
  o[{{c}}] = vec4<f32>(0.0);
#endfor
  var m = vec4<f32>(LOWEST);  // the 4 rows' running maxima (the same in the row's 8 invocations)
  var l = vec4<f32>(0.0);     // the 4 rows' sums over this invocation's keys

  for (var j0 = key_begin; j0 < key_end; j0 = j0 + BC) {
    let n = min(BC, key_end - j0);
    workgroupBarrier();  // the previous tile's P and V are consumed
    for (var e = lid; e < D * 8u; e = e + THREADS) {
      let j = 4u * (e % 8u);
      let d = e / 8u;
      var x = vec4<f32>(0.0);
      if (j + 0u < n) { x.x = key(b, j0 + j + 0u, d); }
      if (j + 1u < n) { x.y = key(b, j0 + j + 1u, d); }
      if (j + 2u < n) { x.z = key(b, j0 + j + 2u, d); }
      if (j + 3u < n) { x.w = key(b, j0 + j + 3u, d); }
      kp_tile[e] = x;
    }
    stage_values(b, j0, n, lid, THREADS);
    workgroupBarrier();
    var s0 = vec4<f32>(0.0);
    var s1 = vec4<f32>(0.0);
    var s2 = vec4<f32>(0.0);
    var s3 = vec4<f32>(0.0);
    for (var d = 0u; d < D; d = d + 1u) {
      let qv = q_tile[d * RG + tr];
      let kv = kp_tile[d * 8u + tc];
      s0 = s0 + qv.x * kv;
      s1 = s1 + qv.y * kv;
      s2 = s2 + qv.z * kv;
      s3 = s3 + qv.w * kv;
    }
    // Keys past n: out of the max, and exp(LOWEST - m) = 0 out of the sums.
    let valid = 4u * tc + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n);
    s0 = select(vec4<f32>(LOWEST), s0, valid);
    s1 = select(vec4<f32>(LOWEST), s1, valid);
    s2 = select(vec4<f32>(LOWEST), s2, valid);
    s3 = select(vec4<f32>(LOWEST), s3, valid);
    red[tc * RG + tr] = vec4<f32>(max(max(s0.x, s0.y), max(s0.z, s0.w)), max(max(s1.x, s1.y), max(s1.z, s1.w)),
                                  max(max(s2.x, s2.y), max(s2.z, s2.w)), max(max(s3.x, s3.y), max(s3.z, s3.w)));
    workgroupBarrier();  // every S is computed (K is free for P) and every maximum posted
    var m_new = m;
#for t 8
    m_new = max(m_new, red[{{t}}u * RG + tr]);
#endfor
    let correction = exp(m - m_new);
    m = m_new;
    let p0 = exp(s0 - m.x);
    let p1 = exp(s1 - m.y);
    let p2 = exp(s2 - m.z);
    let p3 = exp(s3 - m.w);
    l = l * correction + vec4<f32>(dot(p0, vec4<f32>(1.0)), dot(p1, vec4<f32>(1.0)), dot(p2, vec4<f32>(1.0)),
                                   dot(p3, vec4<f32>(1.0)));
    kp_tile[(4u * tc + 0u) * RG + tr] = vec4<f32>(p0.x, p1.x, p2.x, p3.x);
    kp_tile[(4u * tc + 1u) * RG + tr] = vec4<f32>(p0.y, p1.y, p2.y, p3.y);
    kp_tile[(4u * tc + 2u) * RG + tr] = vec4<f32>(p0.z, p1.z, p2.z, p3.z);
    kp_tile[(4u * tc + 3u) * RG + tr] = vec4<f32>(p0.w, p1.w, p2.w, p3.w);
#for g DVG
    o[0u * DVG + {{g}}u] = o[0u * DVG + {{g}}u] * correction.x;
    o[1u * DVG + {{g}}u] = o[1u * DVG + {{g}}u] * correction.y;
    o[2u * DVG + {{g}}u] = o[2u * DVG + {{g}}u] * correction.z;
    o[3u * DVG + {{g}}u] = o[3u * DVG + {{g}}u] * correction.w;
#endfor
    workgroupBarrier();  // P is posted
    for (var j = 0u; j < n; j = j + 1u) {
      let pv = kp_tile[j * RG + tr];
#for g DVG
      {
        let vv = v_tile[j * DV4 + min(tc + 8u * {{g}}u, DV4 - 1u)];
        o[0u * DVG + {{g}}u] = o[0u * DVG + {{g}}u] + pv.x * vv;
        o[1u * DVG + {{g}}u] = o[1u * DVG + {{g}}u] + pv.y * vv;
        o[2u * DVG + {{g}}u] = o[2u * DVG + {{g}}u] + pv.z * vv;
        o[3u * DVG + {{g}}u] = o[3u * DVG + {{g}}u] + pv.w * vv;
      }
#endfor
    }
  }
  // The rows' sums: this invocation's share plus the other 7 of the row.
  workgroupBarrier();
  red[tc * RG + tr] = l;
  workgroupBarrier();
  var total = vec4<f32>(0.0);
#for t 8
  total = total + red[{{t}}u * RG + tr];
#endfor
#for i 4
  {
    let row = row0 + 4u * tr + {{i}}u;
    if (row < params.lq) {
#if SPLIT
      let base = params.o_offset + ((slice * params.batch + b) * params.lq + row) * (DV + 2u);
      let inv = 1.0;
      let step = 1u;
      if (tc == 0u) {
        store_o(base + DV, m[{{i}}u]);
        store_o(base + DV + 1u, total[{{i}}u]);
      }
#else
      let base = o_index(b, row, 0u);
      let inv = 1.0 / total[{{i}}u];
      let step = params.o_col;
#endif
#for g DVG
      {
        let c = 4u * (tc + 8u * {{g}}u);
        let x = o[{{i}}u * DVG + {{g}}u] * inv;
        if (c + 0u < DV) { store_o(base + (c + 0u) * step, x.x); }
        if (c + 1u < DV) { store_o(base + (c + 1u) * step, x.y); }
        if (c + 2u < DV) { store_o(base + (c + 2u) * step, x.z); }
        if (c + 3u < DV) { store_o(base + (c + 3u) * step, x.w); }
      }
#endfor
    }
  }
#endfor
}
