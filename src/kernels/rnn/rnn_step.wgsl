// One timestep of an ONNX LSTM / GRU / RNN for all directions and batch rows (rnn_kernel.h).
// Workgroup (x: JT hidden units j times KS slices of K, y: BT batch rows, z: direction); the tile
// sizes come from rnn_step_tiling.h (wide tiles for large batches, narrow ones with many K slices
// when few workgroups would otherwise run). Each (j, slice) accumulates the G recurrent products
// sum_k src[b][k] * R^T[d][k][col0 + g*H + j] for its BT rows, with the source vector staged
// through workgroup memory KC entries at a time and R^T read coalesced along j; the slices' partial
// sums meet in workgroup memory, then slice 0 applies the cell equations of the ONNX spec to its
// (b, j) and writes the state and the outputs. Rendered with
//   CELL_LSTM / CELL_GRU / CELL_RNN, PHASE_FUSED / PHASE_ZR / PHASE_H (GRU linear_before_reset=0:
//   z and r first, then h), G (gates multiplied in this dispatch), JT, KS, KC, BT, and
//   tensor_access for y (binding 4), yh (5), yc (6) prepended.
#include "rnn/rnn_cell.wgsl"

const JT: u32 = {{JT}}u;            // hidden units per workgroup
const KS: u32 = {{KS}}u;            // invocations sharing one hidden unit's dot products
const KC: u32 = {{KC}}u;            // source entries staged per chunk

var<workgroup> hs: array<f32, {{HS_SIZE}}>;
#if K_SPLIT
var<workgroup> red: array<f32, {{RED_SIZE}}>;
#endif

// Unit tile `tile` of batch tile `btile` and direction d at step `step`: the product of the source
// vector (at `src`) with R^T, the slices' reduction, the gates, the state and the outputs.
fn step_tile(step: u32, tile: u32, btile: u32, d: u32, lidx: u32, h_in: u32, h_out: u32, src: u32) {
  let S = p.dims.y;
  let B = p.dims.z;
  let H = p.dims.w;
  let jl = lidx % JT;
  let ks = lidx / JT;  // K slice: entries ks, ks + KS, ... of each staged chunk
  let j = tile * JT + jl;
  let b0 = btile * BT;
  let row_stride = GT * H;

  var acc: array<f32, {{ACC}}>;
  for (var i = 0u; i < G * BT; i++) {
    acc[i] = 0.0;
  }
  // Slice 0 loads its units' projections now: their (DRAM) latency overlaps the product below
  // instead of following it. A step is one chain of dependent memory latencies, not bandwidth.
  var xp: array<f32, GT * BT>;
  if (ks == 0u && j < H) {
    let t = select(step, S - 1u - step, has(F_REVERSE0 << d));
    for (var bb = 0u; bb < BT; bb++) {
      if (b0 + bb < B) {
        let xb = xw_index(t, d, b0 + bb, j);
        for (var g = 0u; g < GT; g++) {
          xp[g * BT + bb] = xw[xb + g * H];
        }
      }
    }
  }
  let src_base = src + d * B * H;
  for (var k0 = 0u; k0 < H; k0 += KC) {
    workgroupBarrier();
    for (var i = lidx; i < BT * KC; i += JT * KS) {
      let b = b0 + i / KC;
      let k = k0 + i % KC;
      var v = 0.0;
      if (b < B && k < H) {
        v = state[src_base + b * H + k];
      }
      hs[i] = v;
    }
    workgroupBarrier();
    if (j < H) {
      let kn = min(KC, H - k0);
      var w_index = (d * H + k0 + ks) * row_stride + p.wts.w + j;
      var kk = ks;
      // Four entries of K per trip with all their weights loaded before the first multiply: four
      // times the loads in flight per invocation (a trip of the plain loop waits on its loads).
      for (; kk + 3u * KS < kn; kk += 4u * KS) {
        var w4: array<f32, G * 4u>;
        for (var u = 0u; u < 4u; u++) {
          for (var g = 0u; g < G; g++) {
            w4[u * G + g] = weights[w_index + u * KS * row_stride + g * H];
          }
        }
        for (var u = 0u; u < 4u; u++) {
          for (var g = 0u; g < G; g++) {
            for (var bb = 0u; bb < BT; bb++) {
              acc[g * BT + bb] += w4[u * G + g] * hs[bb * KC + kk + u * KS];
            }
          }
        }
        w_index += 4u * KS * row_stride;
      }
      for (; kk < kn; kk += KS) {
        for (var g = 0u; g < G; g++) {
          let w = weights[w_index + g * H];
          for (var bb = 0u; bb < BT; bb++) {
            acc[g * BT + bb] += w * hs[bb * KC + kk];
          }
        }
        w_index += KS * row_stride;
      }
    }
  }
#if K_SPLIT
  // The slices' partial sums meet in workgroup memory in log2(KS) halving rounds (KS is a power
  // of two); a serial sum by slice 0 would take (KS - 1) * G * BT dependent reads (252 at KS = 64).
  workgroupBarrier();
  for (var i = 0u; i < G * BT; i++) {
    red[(ks * G * BT + i) * JT + jl] = acc[i];
  }
  for (var half = KS / 2u; half > 0u; half /= 2u) {
    workgroupBarrier();
    if (ks < half) {
      for (var i = 0u; i < G * BT; i++) {
        let mine = (ks * G * BT + i) * JT + jl;
        red[mine] += red[((ks + half) * G * BT + i) * JT + jl];
      }
    }
  }
  workgroupBarrier();
  if (ks == 0u) {
    for (var i = 0u; i < G * BT; i++) {
      acc[i] = red[i * JT + jl];
    }
  }
#endif
  // Slice 0 finishes its units.
  if (ks == 0u && j < H) {
    finish_units(step, btile, d, j, h_in, h_out, &acc, &xp);
  }
}


@compute @workgroup_size({{WG_SIZE}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
#if WHOLE_SEQUENCE
  // Every step of the sequence in this one dispatch: the workgroup owns all hidden units of its
  // rows and direction, so a step needs only a workgroup barrier (not a new dispatch) before the
  // next one reads the new state. Chosen when R is small (rnn_options.h, StepMode: it stays in cache).
  for (var step = 0u; step < p.dims.y; step++) {
    let odd = (step & 1u) == 1u;
    let h_in = select(p.st.x, p.st.y, odd);
    let h_out = select(p.st.y, p.st.x, odd);
    for (var tile = 0u; tile * JT < p.dims.w; tile++) {
      step_tile(step, tile, wg.y, wg.z, lid.x, h_in, h_out, h_in);
    }
    storageBarrier();
  }
#else
  step_tile(p.dims.x, wg.x, wg.y, wg.z, lid.x, p.st.x, p.st.y, p.st.w);
#endif
  if (p.dims.x == 0xffffffffu) {
    // Never taken: keeps every binding in the automatic layout, which all variants share.
    store_y(0u, 0.0);
    store_yh(0u, 0.0);
    store_yc(0u, 0.0);
  }
}
