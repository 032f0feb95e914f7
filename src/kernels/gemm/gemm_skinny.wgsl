// Skinny GEMM for few rows (M <= 64: recurrent steps, single frames): memory-bound on B, so the
// aim is to stream B once at full bandwidth (a GEMV with several right-hand sides).
//
// B must be stored K-contiguous ([N, K]: transposed, or prepacked). A workgroup owns NC * NT columns
// of C and MB = 4 * MV rows; each group of KS threads works NT columns (n, n + NC, ...) and splits K
// in interleaved vec4 steps, so the KS lanes of one column read one contiguous run of that B row
// (coalesced), every B vec4 is used for all MB rows from registers, and every A vec4 for all NT
// columns (register blocking over rows and columns, as in a GEMV with several right-hand sides:
// with NT = 1 the A loads, L1 hits but one per 4 FMA, dominate once M passes ~16). The KS partial sums are then reduced: with one
// subgroupAdd when KS equals the subgroup size (SUBGROUP_REDUCE; the KS threads of a column are
// consecutive invocations, which is how every Vulkan/Metal/D3D driver forms subgroups of a 1-D
// workgroup), else by a tree in workgroup memory.
//
// Template values (besides gemm_common's): KS NC NT MV A_TRANS SUBGROUP_REDUCE, OUT_TRANS (the plan
// swapped the operands to compute C^T = B^T A^T for few columns: store transposed).
#if SUBGROUP_REDUCE
enable subgroups;
#endif

#include "gemm/gemm_common.wgsl"

const KS: u32 = {{KS}}u;
const NC: u32 = {{NC}}u;
const NT: u32 = {{NT}}u;
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

// The epilogue and store of rows m .. m+3 of column n (those inside the output).
fn store_rows(base: BatchBase, m: u32, n: u32, sums: vec4<f32>) {
  if (n >= params.N) { return; }
  for (var i = 0u; i < 4u; i++) {
    let r = m + i;
#if OUT_TRANS
    // The operands were swapped (C^T = B^T A^T): element (r, n) here is C[n, r].
    if (r < params.M) { store_one(base.c + n * params.M + r, epilogue(sums[i], base.d, r, n, base.c + n * params.M + r)); }
#else
    if (r < params.M) { store_one(base.c + r * params.N + n, epilogue(sums[i], base.d, r, n, base.c + r * params.N + n)); }
#endif
  }
}

@compute @workgroup_size(THREADS, 1, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let batch = params.batch_base + wg.z;
  let base = batch_base(batch);
  let s = lid % KS;
  // Row blocks run along x, the fastest-varying workgroup index, so the workgroups that share one
  // slice of B run at about the same time and all but the first find it in L2 (B is the big operand).
  let m0 = wg.x * MV * 4u;
  let n0 = wg.y * NC * NT + lid / KS;  // this thread's columns: n0 + j * NC, j < NT

  var acc: array<vec4<f32>, MV * NT>;  // acc[j * MV + v][i]: column n0 + j * NC, row m0 + 4 v + i
  let k_steps = (params.K + 4u * KS - 1u) / (4u * KS);
  for (var step = 0u; step < k_steps; step++) {
    let k = (step * KS + s) * 4u;
    var b: array<vec4<f32>, NT>;
    for (var j = 0u; j < NT; j++) {
      b[j] = load_b_unit(base.b, min(n0 + j * NC, params.N - 1u), k, params.N, params.b_k_limit);
    }
    for (var v = 0u; v < MV; v++) {
      for (var i = 0u; i < 4u; i++) {
        let a = a_row_unit(base.a, m0 + 4u * v + i, k);
        for (var j = 0u; j < NT; j++) { acc[j * MV + v][i] += dot(a, b[j]); }
      }
    }
  }

#if SUBGROUP_REDUCE
  for (var v = 0u; v < MV * NT; v++) { acc[v] = subgroupAdd(acc[v]); }
  if (s == 0u) {
    for (var j = 0u; j < NT; j++) {
      for (var v = 0u; v < MV; v++) { store_rows(base, m0 + 4u * v, n0 + j * NC, acc[j * MV + v]); }
    }
  }
#else
  // One column block at a time, so the workgroup memory holds MV (not MV * NT) partials per thread:
  // the KS threads of a column group deposit their partials, then thread s < MV of the group adds
  // up row block s over the KS of them (two barriers per column block; a tree would need log2(KS)).
  let group_base = (lid / KS) * KS * MV;
  for (var j = 0u; j < NT; j++) {
    workgroupBarrier();  // the previous block's partials have been read
    for (var v = 0u; v < MV; v++) { partial[group_base + s * MV + v] = acc[j * MV + v]; }
    workgroupBarrier();
    if (s < MV) {
      var sum = vec4<f32>(0.0);
      for (var t = 0u; t < KS; t++) { sum += partial[group_base + t * MV + s]; }
      store_rows(base, m0 + 4u * s, n0 + j * NC, sum);
    }
  }
#endif
}
