// Skinny GEMM for few rows (M <= 64: recurrent steps, single frames): memory-bound on B, so the
// aim is to stream B once at full bandwidth (a GEMV with several right-hand sides).
//
// B must be stored K-contiguous ([N, K]: transposed, or prepacked). A workgroup owns NC columns of
// C and MB = 4 * MV rows; each column is worked by KS threads that split K in interleaved vec4
// steps, so the KS lanes of one column read one contiguous run of that B row (coalesced), and every
// B vec4 is used for all MB rows from registers. The KS partial sums are then reduced: with one
// subgroupAdd when KS equals the subgroup size (SUBGROUP_REDUCE; the KS threads of a column are
// consecutive invocations, which is how every Vulkan/Metal/D3D driver forms subgroups of a 1-D
// workgroup), else by a tree in workgroup memory.
//
// Template values (besides gemm_common's): KS NC MV A_TRANS SUBGROUP_REDUCE, OUT_TRANS (the plan
// swapped the operands to compute C^T = B^T A^T for few columns: store transposed).
#if SUBGROUP_REDUCE
enable subgroups;
#endif

#include "gemm/gemm_common.wgsl"

const KS: u32 = {{KS}}u;
const NC: u32 = {{NC}}u;
const MV: u32 = {{MV}}u;
const THREADS: u32 = KS * NC;

// Row m of op(A), elements k .. k+3 (zero beyond K).
fn a_row_unit(base: u32, m: u32, k: u32) -> vec4<f32> {
#if A_TRANS
  let mm = min(m, params.M - 1u);
  var v: vec4<f32>;
  for (var i = 0u; i < 4u; i++) {
    let kk = k + i;
    v[i] = select(0.0, a_elem(base + min(kk, params.K - 1u) * params.a_ld + mm), kk < params.K);
  }
  return v;
#else
  return load_a_unit(base, m, k, params.M, params.K);
#endif
}

#if SUBGROUP_REDUCE
#else
var<workgroup> partial: array<vec4<f32>, MV * THREADS>;
#endif

@compute @workgroup_size(THREADS, 1, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let batch = params.batch_base + wg.z;
  let base = batch_base(batch);
  let s = lid % KS;
  let n = wg.x * NC + lid / KS;
  let nn = min(n, params.N - 1u);
  let m0 = wg.y * MV * 4u;

  var acc: array<vec4<f32>, MV>;  // acc[v][i]: row m0 + 4 v + i
  let k_steps = (params.K + 4u * KS - 1u) / (4u * KS);
  for (var step = 0u; step < k_steps; step++) {
    let k = (step * KS + s) * 4u;
    let b = load_b_unit(base.b, nn, k, params.N, params.b_k_limit);
    for (var v = 0u; v < MV; v++) {
      for (var i = 0u; i < 4u; i++) {
        acc[v][i] += dot(a_row_unit(base.a, m0 + 4u * v + i, k), b);
      }
    }
  }

#if SUBGROUP_REDUCE
  for (var v = 0u; v < MV; v++) { acc[v] = subgroupAdd(acc[v]); }
#else
  for (var v = 0u; v < MV; v++) { partial[v * THREADS + lid] = acc[v]; }
  workgroupBarrier();
  for (var stride = KS / 2u; stride > 0u; stride /= 2u) {
    if (s < stride) {
      for (var v = 0u; v < MV; v++) { partial[v * THREADS + lid] += partial[v * THREADS + lid + stride]; }
    }
    workgroupBarrier();
  }
  for (var v = 0u; v < MV; v++) { acc[v] = partial[v * THREADS + lid]; }
#endif

  if (s == 0u && n < params.N) {
    for (var v = 0u; v < MV; v++) {
      for (var i = 0u; i < 4u; i++) {
        let m = m0 + 4u * v + i;
#if OUT_TRANS
        // The operands were swapped (C^T = B^T A^T): element (m, n) here is C[n, m].
        if (m < params.M) { store_one(base.c + n * params.M + m, epilogue(acc[v][i], base.d, m, n)); }
#else
        if (m < params.M) { store_one(base.c + m * params.N + n, epilogue(acc[v][i], base.d, m, n)); }
#endif
      }
    }
  }
}
