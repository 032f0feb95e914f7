// Tiled GEMM: C = act(alpha * op(A) op(B) + beta * D), one BM x BN output tile per workgroup.
//
// Classic shared-memory blocking (as in CUTLASS / Volkov-Demmel SGEMM): per K step of BK the
// workgroup stages a BM x BK slice of op(A) and a BK x BN slice of op(B) in workgroup memory, then
// each thread accumulates a TM x 4 register block with one vec4 of B and TM scalars of A per k.
// Tile loads move 4 contiguous elements of the stored matrix per thread (one vec4 load when
// aligned); out-of-range elements are clamped + zeroed, so the hot loop has no bounds branches.
// Float32 accumulation for every storage type.
//
// Template values (besides gemm_common's): WG_X WG_Y (threads along N and M), TM (rows per thread),
// BK, A_TRANS B_TRANS (operand stored transposed), A_LOADS B_LOADS (tile units per thread),
// KEEP_K_LOOP: bound the inner k loop by a uniform equal to BK instead of the constant, so the
// compiler keeps it a loop. Chosen on CPU adapters (lavapipe, SwiftShader), where compiling the
// fully unrolled loop with LLVM costs more than every small GEMM it would then run.

#include "gemm/gemm_common.wgsl"

const WG_X: u32 = {{WG_X}}u;
const WG_Y: u32 = {{WG_Y}}u;
const TM: u32 = {{TM}}u;
const BK: u32 = {{BK}}u;
const BM: u32 = WG_Y * TM;
const BN: u32 = WG_X * 4u;
const THREADS: u32 = WG_X * WG_Y;

// [k][m / 4]: a thread reads its TM rows of one k as TM / 4 vec4s (TM is a multiple of 4).
var<workgroup> tile_a: array<vec4<f32>, BK * BM / 4u>;
var<workgroup> tile_b: array<vec4<f32>, BK * BN / 4u>;  // [k][n / 4]

fn load_tiles(tid: u32, a_base: u32, b_base: u32, m0: u32, n0: u32, k0: u32) {
  for (var l = 0u; l < {{A_LOADS}}u; l++) {
    let u = l * THREADS + tid;
#if A_TRANS
    // stored [K, M]: a unit is 4 neighbouring m of one k
    let r = u / (BM / 4u);
    let c = (u % (BM / 4u)) * 4u;
    let v = load_a_unit(a_base, k0 + r, m0 + c, params.K, params.M);
    tile_a[(r * BM + c) / 4u] = v;  // c is a multiple of 4: one whole vec4
#else
    // stored [M, K]: a unit is 4 neighbouring k of one m
    let r = u / (BK / 4u);
    let c = (u % (BK / 4u)) * 4u;
    let v = load_a_unit(a_base, m0 + r, k0 + c, params.M, params.K);
    for (var i = 0u; i < 4u; i++) { tile_a[((c + i) * BM + r) / 4u][r % 4u] = v[i]; }
#endif
  }
  for (var l = 0u; l < {{B_LOADS}}u; l++) {
    let u = l * THREADS + tid;
#if B_TRANS
    // stored [N, K]: a unit is 4 neighbouring k of one n
    let r = u / (BK / 4u);
    let c = (u % (BK / 4u)) * 4u;
    let v = load_b_unit(b_base, n0 + r, k0 + c, params.N, params.b_k_limit);
    let slot = r / 4u;
    let lane = r % 4u;
    for (var i = 0u; i < 4u; i++) { tile_b[(c + i) * (BN / 4u) + slot][lane] = v[i]; }
#else
    // stored [K, N]: a unit is 4 neighbouring n of one k, exactly one vec4 of the tile
    let r = u / (BN / 4u);
    let c = u % (BN / 4u);
    tile_b[r * (BN / 4u) + c] = load_b_unit(b_base, k0 + r, n0 + c * 4u, params.K, params.N);
#endif
  }
}

@compute @workgroup_size(WG_X, WG_Y, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let batch = params.batch_base + wg.z;
  let base = batch_base(batch);
  let m0 = wg.y * BM;
  let n0 = wg.x * BN;

  var acc: array<vec4<f32>, TM>;
  let k_tiles = (params.K + BK - 1u) / BK;
  for (var t = 0u; t < k_tiles; t++) {
    load_tiles(tid, base.a, base.b, m0, n0, t * BK);
    workgroupBarrier();
#if KEEP_K_LOOP
    let k_end = params.k_step_runtime;
#else
    let k_end = BK;
#endif
    for (var k = 0u; k < k_end; k++) {
      let b = tile_b[k * (BN / 4u) + lid.x];
      for (var q = 0u; q < TM / 4u; q++) {
        let a = tile_a[(k * BM + lid.y * TM) / 4u + q];
        for (var i = 0u; i < 4u; i++) {
          acc[4u * q + i] = fma(vec4<f32>(a[i]), b, acc[4u * q + i]);
        }
      }
    }
    workgroupBarrier();
  }

  let n = n0 + lid.x * 4u;
  for (var i = 0u; i < TM; i++) {
    let m = m0 + lid.y * TM + i;
    if (m >= params.M) { break; }
    let row = base.c + m * params.N;
#if OUT_F16_PAIRS
    for (var j = 0u; j < 4u; j += 2u) {
      if (n + j < params.N) {
        store_pair(row + n + j, vec2<f32>(epilogue(acc[i][j], base.d, m, n + j),
                                          epilogue(acc[i][j + 1u], base.d, m, n + j + 1u)));
      }
    }
#else
    for (var j = 0u; j < 4u; j++) {
      if (n + j < params.N) { store_one(row + n + j, epilogue(acc[i][j], base.d, m, n + j)); }
    }
#endif
  }
}
