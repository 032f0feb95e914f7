// Tiled GEMM: C = act(alpha * op(A) op(B) + beta * D), one BM x BN output tile per workgroup.
//
// Classic shared-memory blocking (as in CUTLASS / Volkov-Demmel SGEMM): per K step of BK the
// workgroup stages a BM x BK slice of op(A) and a BK x BN slice of op(B) in workgroup memory, then
// each thread accumulates a TM x 4 NV register block with NV vec4s of B (slots lid.x + v WG_X, so the
// lanes of a warp read neighbouring slots) and TM scalars of A per k.
// Tile loads move 4 contiguous elements of the stored matrix per thread (one vec4 load when
// aligned); out-of-range elements are clamped + zeroed, so the hot loop has no bounds branches.
// Float32 accumulation for every storage type.
//
// A K-contiguous operand (A untransposed, B transposed or prepacked) arrives as 4 neighbouring k of
// one row and is scattered into the [k][row] tile as 4 scalar stores. Without care the threads of a
// warp that share a row offset but differ in k hit the same bank (the tile row length is a multiple
// of 32 words): a 4- or 8-way conflict on every store. The tile's vec4 slot is therefore XOR-swizzled
// with a function of k (swz_k below, cf. CUTLASS's XOR-swizzled shared memory layouts), which spreads
// those threads over all 32 banks and keeps each vec4 intact, so the inner loop still reads one
// vec4 per operand row group, at slot ^ swz_k(k).
//
// Template values (besides gemm_common's): WG_X WG_Y (threads along N and M), TM (rows per thread),
// NV (vec4s of columns per thread), TQ (= TM / 4), FOR_UNROLL (the register block's loops written
// out by the template's #for, so that `acc` is indexed by constants only whatever the GPU compiler
// unrolls; GemmVariant::for_unroll, an experiment), STORE_UNROLL (the stores written out likewise:
// FOR_UNROLL, or an addend or fused program in the store),
// BK, A_TRANS B_TRANS (operand stored transposed), A_LOADS B_LOADS (tile units per thread),
// GROUP_M: 0, or walk the output tiles in column-major groups of GROUP_M tile rows (the "grouped
// ordering" of Triton's matmul tutorial) so that the workgroups resident at one time span few
// operand rows; this matters when both operands are K-contiguous (each k step then touches one
// short piece of every resident row of A and B, and the whole of a large B otherwise),
// KEEP_K_LOOP: bound the inner k loop by a uniform equal to BK instead of the constant, so the
// compiler keeps it a loop. Chosen on CPU adapters (lavapipe, SwiftShader), where compiling the
// fully unrolled loop with LLVM costs more than every small GEMM it would then run,
// DOUBLE_BUFFER: two copies of the staged tiles (COPIES = 2). The loads of K step t + 1 go into
// registers (staged_a / staged_b) before step t's multiply-adds and into the other copy after them,
// so a K step costs one workgroup barrier instead of two and its memory latency overlaps the
// arithmetic of the same workgroup instead of needing other resident workgroups to hide it (the
// classic SGEMM prefetch; GemmVariant::double_buffer, an experiment). Twice the workgroup memory.
// OUT_VEC4 (gemm_common): the output bound as vec4s, one 16-byte store per 4 columns (N and the output
// offset multiples of 4; GemmVariant::vec_store, an experiment).

#include "gemm/gemm_common.wgsl"

const WG_X: u32 = {{WG_X}}u;
const WG_Y: u32 = {{WG_Y}}u;
const TM: u32 = {{TM}}u;
const BK: u32 = {{BK}}u;
const NV: u32 = {{NV}}u;
const BM: u32 = WG_Y * TM;
const BN: u32 = WG_X * 4u * NV;
const THREADS: u32 = WG_X * WG_Y;
const TQ: u32 = TM / 4u;

const A_COPY: u32 = BK * BM / 4u;  // vec4s of one staged A tile
const B_COPY: u32 = BK * BN / 4u;
// [copy][k][m / 4]: a thread reads its TM rows of one k as TM / 4 vec4s (TM is a multiple of 4).
var<workgroup> tile_a: array<vec4<f32>, {{COPIES}}u * A_COPY>;
var<workgroup> tile_b: array<vec4<f32>, {{COPIES}}u * B_COPY>;  // [copy][k][n / 4]

// XOR applied to the vec4 slot of tile row k for an operand staged from K-contiguous storage.
// BK / 4 threads share one row of the operand (a unit is 4 k), so a 32-thread warp covers
// 128 / BK rows = 32 / BK vec4 slots; multiplying k / 4 by 32 / BK gives those threads' stores
// distinct slots modulo 8, i.e. distinct banks. Values stay below 8 <= BM / 4, BN / 4 (powers of two,
// checked by the planner), so the XOR stays inside the tile row.
fn swz_k(k: u32) -> u32 { return ((k / 4u) * (32u / BK)) & 7u; }
#if A_TRANS
fn a_swz(k: u32) -> u32 { return 0u; }
#else
fn a_swz(k: u32) -> u32 { return swz_k(k); }
#endif
#if B_TRANS
fn b_swz(k: u32) -> u32 { return swz_k(k); }
#else
fn b_swz(k: u32) -> u32 { return 0u; }
#endif

#if DOUBLE_BUFFER
// This thread's units of one K step, between their loads and their stores into workgroup memory
// (the loops over them are written out by #for, so that these arrays are indexed by constants only).
var<private> staged_a: array<vec4<f32>, {{A_LOADS}}u>;
var<private> staged_b: array<vec4<f32>, {{B_LOADS}}u>;

// Loads this thread's units of the K step at k0 into staged_a / staged_b (no workgroup memory).
fn fetch_tiles(tid: u32, a_base: u32, b_base: u32, m0: u32, n0: u32, k0: u32) {
#for l A_LOADS
  {
    let l = {{l}}u;
    let u = l * THREADS + tid;
#if A_TRANS
    staged_a[l] = load_a_unit(a_base, k0 + u / (BM / 4u), m0 + (u % (BM / 4u)) * 4u, params.K, params.M);
#else
    staged_a[l] = load_a_unit(a_base, m0 + u / (BK / 4u), k0 + (u % (BK / 4u)) * 4u, params.M, params.K);
#endif
  }
#endfor
#for l B_LOADS
  {
    let l = {{l}}u;
    let u = l * THREADS + tid;
#if B_TRANS
    staged_b[l] = load_b_unit(b_base, n0 + u / (BK / 4u), k0 + (u % (BK / 4u)) * 4u, params.N, params.b_k_limit);
#else
    staged_b[l] = load_b_unit(b_base, k0 + u / (BN / 4u), n0 + (u % (BN / 4u)) * 4u, params.K, params.N);
#endif
  }
#endfor
}

// Stores staged_a / staged_b into copy `copy` of the tiles, laid out as load_tiles below lays them.
fn stage_tiles(tid: u32, copy: u32) {
  let ao = copy * A_COPY;
  let bo = copy * B_COPY;
#for l A_LOADS
  {
    let l = {{l}}u;
    let u = l * THREADS + tid;
#if A_TRANS
    tile_a[ao + u] = staged_a[l];  // unit u is vec4 (u / (BM / 4)) * BM / 4 + u % (BM / 4) = u
#else
    let r = u / (BK / 4u);
    let c = (u % (BK / 4u)) * 4u;
    for (var i = 0u; i < 4u; i++) { tile_a[ao + (c + i) * (BM / 4u) + ((r / 4u) ^ a_swz(c + i))][r % 4u] = staged_a[l][i]; }
#endif
  }
#endfor
#for l B_LOADS
  {
    let l = {{l}}u;
    let u = l * THREADS + tid;
#if B_TRANS
    let r = u / (BK / 4u);
    let c = (u % (BK / 4u)) * 4u;
    for (var i = 0u; i < 4u; i++) { tile_b[bo + (c + i) * (BN / 4u) + ((r / 4u) ^ b_swz(c + i))][r % 4u] = staged_b[l][i]; }
#else
    tile_b[bo + u] = staged_b[l];  // unit u is vec4 (u / (BN / 4)) * BN / 4 + u % (BN / 4) = u
#endif
  }
#endfor
}
#else
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
    for (var i = 0u; i < 4u; i++) { tile_a[(c + i) * (BM / 4u) + ((r / 4u) ^ a_swz(c + i))][r % 4u] = v[i]; }
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
    for (var i = 0u; i < 4u; i++) { tile_b[(c + i) * (BN / 4u) + (slot ^ b_swz(c + i))][lane] = v[i]; }
#else
    // stored [K, N]: a unit is 4 neighbouring n of one k, exactly one vec4 of the tile
    let r = u / (BN / 4u);
    let c = u % (BN / 4u);
    tile_b[r * (BN / 4u) + c] = load_b_unit(b_base, k0 + r, n0 + c * 4u, params.K, params.N);
#endif
  }
}
#endif

// Columns n .. n + 3 of output row m (consecutive elements from `e`, also with COLUMN_PARTS: a part
// is a multiple of 4 wide): the epilogue, then the store.
fn store_vec(c_base: u32, m: u32, n: u32, c: vec4<f32>, d_base: u32) {
  let row = out_elem(c_base, m, n) - n;
#if OUT_VEC4
  // N % 4 == 0: the four columns are all inside or all outside, and row + n is a multiple of 4.
  if (n < params.N) {
    store_four(row + n, vec4<f32>(epilogue(c[0], d_base, m, n, row + n), epilogue(c[1], d_base, m, n + 1u, row + n + 1u),
                                  epilogue(c[2], d_base, m, n + 2u, row + n + 2u),
                                  epilogue(c[3], d_base, m, n + 3u, row + n + 3u)));
  }
#else
#if OUT_F16_PAIRS
  for (var j = 0u; j < 4u; j += 2u) {
    if (n + j < params.N) {
      store_pair(row + n + j, vec2<f32>(epilogue(c[j], d_base, m, n + j, row + n + j),
                                        epilogue(c[j + 1u], d_base, m, n + j + 1u, row + n + j + 1u)));
    }
  }
#else
  for (var j = 0u; j < 4u; j++) {
    if (n + j < params.N) { store_one(row + n + j, epilogue(c[j], d_base, m, n + j, row + n + j)); }
  }
#endif
#endif
}

@compute @workgroup_size(WG_X, WG_Y, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(num_workgroups) groups: vec3<u32>) {
  let batch = params.batch_base + wg.z;
  let base = batch_base(batch);
#if GROUP_M
  // Linear workgroup index -> (tile row, tile column), GROUP_M tile rows at a time, column-major
  // inside a group (the last group may have fewer rows). A bijection on the groups.x * groups.y grid.
  let pid = wg.y * groups.x + wg.x;
  let per_group = {{GROUP_M}}u * groups.x;
  let first_row = (pid / per_group) * {{GROUP_M}}u;
  let rows_here = min(groups.y - first_row, {{GROUP_M}}u);
  let tile_row = first_row + (pid % per_group) % rows_here;
  let tile_col = (pid % per_group) / rows_here;
  let m0 = tile_row * BM;
  let n0 = tile_col * BN;
#else
  let m0 = wg.y * BM;
  let n0 = wg.x * BN;
#endif

  var acc: array<vec4<f32>, TM * NV>;
  let k_tiles = (params.K + BK - 1u) / BK;
#if DOUBLE_BUFFER
  if (k_tiles > 0u) {  // (K = 0: nothing to load, and the loads' clamps need K >= 1)
    fetch_tiles(tid, base.a, base.b, m0, n0, 0u);
    stage_tiles(tid, 0u);
  }
  workgroupBarrier();
#endif
  for (var t = 0u; t < k_tiles; t++) {
#if DOUBLE_BUFFER
    // Copy t % 2 holds step t; step t + 1's loads are in flight during its multiply-adds.
    let ao = (t % 2u) * A_COPY;
    let bo = (t % 2u) * B_COPY;
    let more = t + 1u < k_tiles;
    if (more) { fetch_tiles(tid, base.a, base.b, m0, n0, (t + 1u) * BK); }
#else
    let ao = 0u;
    let bo = 0u;
    load_tiles(tid, base.a, base.b, m0, n0, t * BK);
    workgroupBarrier();
#endif
#if KEEP_K_LOOP
    let k_end = params.k_step_runtime;
#else
    let k_end = BK;
#endif
    for (var k = 0u; k < k_end; k++) {
#if FOR_UNROLL
      // Indexed by constants only (the template's #for): a GPU compiler that leaves one of these
      // loops rolled would move `acc` to local memory.
#for v NV
      let b{{v}} = tile_b[bo + k * (BN / 4u) + ((lid.x + {{v}}u * WG_X) ^ b_swz(k))];
#endfor
#for q TQ
      {
        let a = tile_a[ao + k * (BM / 4u) + ((lid.y * TQ + {{q}}u) ^ a_swz(k))];
#for i 4
#for v NV
        acc[(4u * {{q}}u + {{i}}u) * NV + {{v}}u] = fma(vec4<f32>(a[{{i}}]), b{{v}}, acc[(4u * {{q}}u + {{i}}u) * NV + {{v}}u]);
#endfor
#endfor
      }
#endfor
#else
      var b: array<vec4<f32>, NV>;
      for (var v = 0u; v < NV; v++) { b[v] = tile_b[bo + k * (BN / 4u) + ((lid.x + v * WG_X) ^ b_swz(k))]; }
      for (var q = 0u; q < TM / 4u; q++) {
        let a = tile_a[ao + k * (BM / 4u) + ((lid.y * TM / 4u + q) ^ a_swz(k))];
        for (var i = 0u; i < 4u; i++) {
          for (var v = 0u; v < NV; v++) {
            acc[(4u * q + i) * NV + v] = fma(vec4<f32>(a[i]), b[v], acc[(4u * q + i) * NV + v]);
          }
        }
      }
#endif
    }
#if DOUBLE_BUFFER
    // Copy (t + 1) % 2 was last read in step t - 1, before the previous barrier.
    if (more) { stage_tiles(tid, 1u - t % 2u); }
#endif
    workgroupBarrier();
  }

  // With an addend or a fused program in the store, the stores are written out by the template's
  // #for (STORE_UNROLL): a loop over `acc` that the GPU compiler leaves rolled moves the whole
  // accumulator to local memory, and with a fused bias in the looped store BS-RoFormer's FFN
  // products ran 17x slower on an H100 (call W of 2026-12-06), as if that had happened. A plain
  // store keeps the loop (the #for stores measured slower on SCNet's products).
#if STORE_UNROLL
#for i TM
  {
    let m = m0 + lid.y * TM + {{i}}u;
#for v NV
    {
      let n = n0 + (lid.x + {{v}}u * WG_X) * 4u;
      let c = acc[{{i}}u * NV + {{v}}u];
      if (m < params.M) { store_vec(base.c, m, n, c, base.d); }
    }
#endfor
  }
#endfor
#else
  for (var i = 0u; i < TM; i++) {
    let m = m0 + lid.y * TM + i;
    if (m >= params.M) { break; }
    for (var v = 0u; v < NV; v++) {
      store_vec(base.c, m, n0 + (lid.x + v * WG_X) * 4u, acc[i * NV + v], base.d);
    }
  }
#endif
}
