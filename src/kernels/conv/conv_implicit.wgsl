// Implicit-GEMM Conv (group 1, 1-D / 2-D, any stride, dilation, padding): y[n] = W[C_out, C_in taps]
// col[n] + bias with the column matrix never stored. A workgroup owns a BM (output channels) x BN
// (flat output positions of one batch) tile; K runs over chunks of BK input channels (outer) and
// taps (inner). Per K step it stages W[m0.., c0..c0+BK, tap] (from wp, implicit_pack_w.wgsl) and the BK x BN slice of the implicit
// column matrix, x[n, c0 + r, source(p, tap)], in workgroup memory, then each thread accumulates TM
// channels x NV vec4s of positions in registers (as in gemm_tiled.wgsl).
//
// Why this order: the taps of one channel chunk read nearly the same input rows one after another
// (L1 hits after the first tap); a thread recomputes the input offsets and padding tests of the PT
// positions it stages once per K step (a few integer ops against BK TM 4 NV multiply-adds), and a
// staged element is one load at offset + c * in_positions, coalesced (the 32 lanes of a warp stage
// 32 neighbouring positions). Channels past C_in (the last chunk) and taps in the padding stage
// zeros, so the inner loop has no branches. The im2col path instead writes and re-reads C_in taps
// floats per output position through memory.
//
// Few tiles (small images, many channels: UVR's 1/16-resolution encoder and ASPP convs) leave most
// SMs idle, so SPLIT divides the channel chunks among tap_step.w slices (more workgroups along z);
// each writes its partial sums to `part` (bound as y) and implicit_splitk_reduce.wgsl adds them,
// the bias and the activation.
//
// TRANSPOSE (ConvTranspose, dilation 1) runs the same GEMM once per stride phase: output coordinate
// o = q s + r - pad (phase r = (o + pad) mod s) gets exactly the taps k = r + s j from inputs i = q - j,
// so phase r is a stride-1 conv over q with J = ceil(K / s) taps j and weights W[ci, co, r + s j]
// (implicit_pack_w_transpose.wgsl packs [phase][C_in][J taps][C_out], zero where r + s j >= K). The
// phases of one batch are slices of wg.z; a phase's positions are its q range, stored back at o
// (every output belongs to one phase and one q: written once, no atomics, no column buffer).
// region.x: one phase's block of the packed weight (elements); kernel.yz: J.
//
// SHUFFLE (a ConvTranspose whose kernel equals its stride, conv_uniforms.h shuffle_applies): every
// phase has one tap (J = 1) and the q range of the whole input, so all phases share the B tile: the
// GEMM rows are m = phase x co_pad + co (region.w = phases x co_pad; A from the phase blocks of the
// packed weight), the columns the input positions q, and row m of column q is stored at output
// o = q s + r(phase) - pad (skipped outside the output; padding rows co >= C_out are zeros, not stored).
// X is read once instead of once per phase, and a tile has phases x C_out rows instead of C_out.
//
// Template values: WG_Y (threads along C_out; the 16 threads along positions are fixed), NV (vec4s of
// positions per thread: BN = 64 NV), BK, SPLIT, PREFETCH (load step t + 1 into registers while step t
// multiplies: more registers, the memory latency hidden inside one workgroup), HAS_BIAS, the ACT_* flags, KEEP_K_LOOP (bound the k loop by
// the uniform chunk.z = BK so CPU adapters do not unroll it; see gemm_tiled.wgsl). region.z: the
// packed weight's row length co_pad; offsets.y its first element (a multiple of 4).
#include "conv/conv_common.wgsl"
#include "gemm/activation.wgsl"
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read> wp: array<vec4<f32>>;  // implicit_pack_w.wgsl's layout
{{BIAS_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: ConvParams;

const WG_X: u32 = 16u;
const WG_Y: u32 = {{WG_Y}}u;
const TM: u32 = 8u;
const NV: u32 = {{NV}}u;
const BK: u32 = {{BK}}u;
const BM: u32 = WG_Y * TM;
const BN: u32 = WG_X * 4u * NV;
const THREADS: u32 = WG_X * WG_Y;
const PT: u32 = BN / 32u;                // positions each thread stages: lane + 32 i
const RG: u32 = THREADS / 32u;           // row groups staging B (WG_Y is even)
const B_ROWS: u32 = BK / RG;             // channel rows each thread stages per K step
const A_VECS: u32 = BM * BK / 4u / THREADS;  // = BK / 8

var<workgroup> tile_a: array<vec4<f32>, BK * BM / 4u>;  // [k][m / 4]
var<workgroup> tile_b: array<vec4<f32>, BK * BN / 4u>;  // [k][p / 4]

// Per-invocation state set once by main and read by fetch.
var<private> g_tid: u32;
var<private> g_m0: u32;
var<private> g_x_batch: u32;
var<private> g_w_base: u32;  // first element of this workgroup's packed weight (its phase's block)
var<private> g_iy0: array<i32, PT>;
var<private> g_ix0: array<i32, PT>;
var<private> g_inside: array<bool, PT>;
// One K step's staged values of this thread: B rows x positions, and the W vec4s.
var<private> st_b: array<f32, B_ROWS * PT>;
var<private> st_a: array<vec4<f32>, A_VECS>;

// Loads K step t (channel chunk t / taps, tap t % taps) from memory into st_a / st_b.
fn fetch(t: u32) {
  let c_in = params.in_size.w;
  let in_h = params.in_size.y;
  let in_w = params.in_size.z;
  let taps = params.kernel.y * params.kernel.z;
  let c0 = (t / taps) * BK;
  let tap = t % taps;
  let ky = tap / params.kernel.z;
  let kx = tap % params.kernel.z;
  // wp[c0 + r, tap, m0..m0 + BM]: vec4s, coalesced (co_pad = region.z).
  for (var l = 0u; l < A_VECS; l++) {
    let e = l * THREADS + g_tid;
    let r = e / (BM / 4u);
    let co = g_m0 + 4u * (e % (BM / 4u));
    let row = (c0 + r) * taps + tap;
#if SHUFFLE
    // co is the GEMM row m = phase x co_pad + channel; a vec4 never straddles two phases (co_pad % 4 == 0).
    let m = min(co, params.region.w - 4u);
    let v = wp[(g_w_base + (m / params.region.z) * params.region.x + row * params.region.z + m % params.region.z) / 4u];
    st_a[l] = select(vec4<f32>(0.0), v, co < params.region.w);
#else
    let v = wp[(g_w_base + row * params.region.z + min(co, params.region.z - 4u)) / 4u];
    st_a[l] = select(vec4<f32>(0.0), v, co < params.region.z);
#endif
  }
  // The implicit columns x[n, c0 + r, source(position, tap)]; zero in the padding and past C_in.
  var src: array<u32, PT>;
  var ok: array<bool, PT>;
  for (var i = 0u; i < PT; i++) {
#if TRANSPOSE
    let iy = g_iy0[i] - i32(ky);  // input i = q - j
    let ix = g_ix0[i] - i32(kx);
#else
    let iy = g_iy0[i] + i32(ky * params.dilation.y);
    let ix = g_ix0[i] + i32(kx * params.dilation.z);
#endif
    ok[i] = g_inside[i] && iy >= 0 && iy < i32(in_h) && ix >= 0 && ix < i32(in_w);
    src[i] = select(0u, u32(iy) * in_w + u32(ix), ok[i]);
  }
  let row_group = g_tid / 32u;
  for (var j = 0u; j < B_ROWS; j++) {
    let ci = c0 + row_group + RG * j;
    let channel = g_x_batch + min(ci, c_in - 1u) * in_h * in_w;
    for (var i = 0u; i < PT; i++) {
      st_b[j * PT + i] = select(0.0, load_x(channel + src[i]), ok[i] && ci < c_in);
    }
  }
}

// floor(a / b) and ceil(a / b) for b > 0 and any sign of a (WGSL's / truncates toward zero).
fn floor_div(a: i32, b: i32) -> i32 {
  return select(-((-a + b - 1) / b), a / b, a >= 0);
}
fn ceil_div(a: i32, b: i32) -> i32 {
  return select(-((-a) / b), (a + b - 1) / b, a >= 0);
}

@compute @workgroup_size(16, WG_Y, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let c_in = params.in_size.w;
  let c_out = params.out_size.w;
  let in_h = params.in_size.y;
  let in_w = params.in_size.z;
  let out_w = params.out_size.z;
  let out_positions = params.out_size.y * out_w;  // out_size.x == 1 (checked by the planner)
  let in_positions = in_h * in_w;
  let taps = params.kernel.y * params.kernel.z;
  let c_steps = (c_in + BK - 1u) / BK;
#if SPLIT
  // Split K: slice wg.z % splits sums its range of channel chunks into part (y binds it, f32).
  let splits = params.tap_step.w;
  let slab = wg.z / splits;
  let split = wg.z % splits;
  let per_split = (c_steps + splits - 1u) / splits;
  let cs_begin = split * per_split;
  let cs_end = min(c_steps, cs_begin + per_split);
#else
  let slab = wg.z;
  let cs_begin = 0u;
  let cs_end = c_steps;
#endif
#if TRANSPOSE
  // slab = batch x phases + phase; the phase's q range along each dimension: o = q s + r - pad in [0, out).
  let sy = i32(params.stride.y);
  let sx = i32(params.stride.z);
  let phases = params.stride.y * params.stride.z;
  let n = slab / phases;
  let phase = slab % phases;
  let ry = i32(phase / params.stride.z);
  let rx = i32(phase % params.stride.z);
  let qy_lo = ceil_div(params.pad.y - ry, sy);
  let qx_lo = ceil_div(params.pad.z - rx, sx);
  let nqy = max(floor_div(i32(params.out_size.y) - 1 + params.pad.y - ry, sy) - qy_lo + 1, 0);
  let nqx = max(floor_div(i32(out_w) - 1 + params.pad.z - rx, sx) - qx_lo + 1, 0);
  let positions = u32(nqy * nqx);
  g_w_base = params.offsets.y + phase * params.region.x;
#else
#if SHUFFLE
  let n = slab;
  let positions = in_positions;  // q: every input position, for every phase
  g_w_base = params.offsets.y;
#else
  let n = slab;
  let positions = out_positions;
  g_w_base = params.offsets.y;
#endif
#endif
  let p0 = wg.x * BN;
  // A tile past this phase's positions (phases differ by a row at most) has nothing to do; the
  // condition is uniform across the workgroup.
  if (p0 >= positions) { return; }
  let m0 = wg.y * BM;
  let x_batch = params.offsets.x + n * c_in * in_positions;

  // The positions this thread stages (lane + 32 i) and their input coordinates at tap (0, 0).
  let lane = tid % 32u;
  let row_group = tid / 32u;
  g_tid = tid;
  g_m0 = m0;
  g_x_batch = x_batch;
  for (var i = 0u; i < PT; i++) {
    let q = p0 + lane + 32u * i;
    g_inside[i] = q < positions;
    let qq = min(q, positions - 1u);
#if TRANSPOSE
    g_iy0[i] = qy_lo + i32(qq / u32(nqx));
    g_ix0[i] = qx_lo + i32(qq % u32(nqx));
#else
#if SHUFFLE
    g_iy0[i] = i32(qq / in_w);
    g_ix0[i] = i32(qq % in_w);
#else
    g_iy0[i] = i32((qq / out_w) * params.stride.y) - params.pad.y;
    g_ix0[i] = i32((qq % out_w) * params.stride.z) - params.pad.z;
#endif
#endif
  }

  var acc: array<vec4<f32>, TM * NV>;
#if KEEP_K_LOOP
  let k_end = params.chunk.z;
#else
  let k_end = BK;
#endif
  // K steps t: channel chunk t / taps (outer), tap t % taps (inner).
  let t_begin = cs_begin * taps;
  let t_end = cs_end * taps;
#if PREFETCH
  if (t_begin < t_end) { fetch(t_begin); }
#endif
  for (var t = t_begin; t < t_end; t++) {
#if PREFETCH
#else
    fetch(t);
#endif
    for (var l = 0u; l < A_VECS; l++) {
      let e = l * THREADS + tid;
      tile_a[e] = st_a[l];  // row e / (BM / 4), vec4 slot e % (BM / 4)
    }
    for (var j = 0u; j < B_ROWS; j++) {
      let r = row_group + RG * j;
      for (var i = 0u; i < PT; i++) {
        let px = lane + 32u * i;
        tile_b[r * (BN / 4u) + px / 4u][px % 4u] = st_b[j * PT + i];
      }
    }
    workgroupBarrier();
#if PREFETCH
    // The next step's loads are in flight while this one multiplies.
    if (t + 1u < t_end) { fetch(t + 1u); }
#endif
    for (var k = 0u; k < k_end; k++) {
      var b: array<vec4<f32>, NV>;
      for (var v = 0u; v < NV; v++) { b[v] = tile_b[k * (BN / 4u) + lid.x + v * WG_X]; }
      for (var q = 0u; q < TM / 4u; q++) {
        let a = tile_a[k * (BM / 4u) + lid.y * (TM / 4u) + q];
        for (var i = 0u; i < 4u; i++) {
          for (var v = 0u; v < NV; v++) {
            acc[(4u * q + i) * NV + v] = fma(vec4<f32>(a[i]), b[v], acc[(4u * q + i) * NV + v]);
          }
        }
      }
    }
    workgroupBarrier();
  }

  for (var mi = 0u; mi < TM; mi++) {
#if SHUFFLE
    let m = m0 + lid.y * TM + mi;
    if (m >= params.region.w) { break; }
    let phase = m / params.region.z;
    let co = m % params.region.z;
    if (co >= c_out) { continue; }
    let ry = phase / params.stride.z;
    let rx = phase % params.stride.z;
#else
    let co = m0 + lid.y * TM + mi;
    if (co >= c_out) { break; }
#endif
#if SPLIT
    let row = params.offsets.w + ((split * params.stride.w + n) * c_out + co) * out_positions;  // stride.w: batch
    let bias_v = 0.0;
#else
    var bias_v = 0.0;
#if HAS_BIAS
    bias_v = load_bias(params.offsets.z + co);
#endif
    let row = params.offsets.w + (n * c_out + co) * out_positions;
#endif
    for (var v = 0u; v < NV; v++) {
      let p = p0 + (lid.x + v * WG_X) * 4u;
#if SHUFFLE
      // Input position p + j as (qy, qx): one division per vec4, then steps along the row.
      var qy = p / in_w;
      var qx = p % in_w;
#endif
      for (var j = 0u; j < 4u; j++) {
#if SHUFFLE
        if (j > 0u) {
          qx += 1u;
          if (qx == in_w) { qx = 0u; qy += 1u; }
        }
#endif
        if (p + j < positions) {
#if TRANSPOSE
          let oy = u32((qy_lo + i32((p + j) / u32(nqx))) * sy + ry - params.pad.y);
          let ox = u32((qx_lo + i32((p + j) % u32(nqx))) * sx + rx - params.pad.z);
          let at = row + oy * out_w + ox;
#else
#if SHUFFLE
          let oy = i32(qy * params.stride.y + ry) - params.pad.y;
          let ox = i32(qx * params.stride.z + rx) - params.pad.z;
          if (oy < 0 || ox < 0 || oy >= i32(params.out_size.y) || ox >= i32(out_w)) { continue; }
          let at = row + u32(oy) * out_w + u32(ox);
#else
          let at = row + p + j;
#endif
#endif
#if SPLIT
          store_y(at, acc[mi * NV + v][j]);
#else
          store_y(at, activate(acc[mi * NV + v][j] + bias_v));
#endif
        }
      }
    }
  }
}
