// Every timestep of an ONNX LSTM / GRU (linear_before_reset=1) / RNN in one dispatch, a workgroup per
// block of BM batch rows of one direction (rnn_kernel.h, StepMode::row_sequence).
//
// Batch rows are independent in a recurrence, so a workgroup that owns ALL hidden units of its rows
// needs nothing from other workgroups between steps: workgroup barriers replace the dependent
// dispatch of the per-step kernels (a floor of several microseconds each on a GPU, more than the
// step's work at MP-SENet's shapes). The cost moves elsewhere: every workgroup streams the whole R^T of its
// direction from L2 once per step, and a stream is only as fast as the bytes it keeps in flight
// (the first version, one load per k in flight per invocation, was latency-bound). So each invocation issues the loads of KB entries of K at once (vec4 along 4 consecutive
// units), and KS invocations split K (shorter chains, more loads in flight; partial sums meet in
// workgroup memory).
//
// State: h of the BM rows in workgroup memory, double-buffered (step s reads buffer s % 2 and writes
// the other). Invocation (tx, ty, ks) owns units tx * UV .. tx * UV + UV - 1 of rows r0 + ty * TM + m
// (m < TM) for the whole sequence; slice ks = 0 applies the cell (finish_units), so its c (LSTM) and
// h in the `state` buffer are only ever read back by itself.
//
// Rendered with the cell flags of rnn_step.wgsl (PHASE_FUSED only), G (= GATES_TOTAL), BT (= TM), UV
// (1 or 4: VEC4 reads R^T through `weights4`, binding 7, H a multiple of 4), UX, BM, H, HP (H rounded
// up to 4), KS, KL (K entries per slice), KB, WG_SIZE, ACC, ACTS, RED_SIZE, PREFETCH_XP (projections
// loaded before the product when the registers allow), UNIFORM_BINDING.
#include "rnn/rnn_cell.wgsl"

#if VEC4
@group(0) @binding(7) var<storage, read> weights4: array<vec4<f32>>;  // the same buffer as `weights`
#endif

const H: u32 = {{H}}u;
const HP: u32 = {{HP}}u;
const HQ: u32 = HP / 4u;
const BM: u32 = {{BM}}u;
const TM: u32 = BT;
const UV: u32 = {{UV}}u;
const UX: u32 = {{UX}}u;
const RG: u32 = BM / TM;
const NT0: u32 = UX * RG;  // invocations of one K slice
const KS: u32 = {{KS}}u;
const KL: u32 = {{KL}}u;
const KB: u32 = {{KB}}u;
const WG: u32 = {{WG_SIZE}}u;
const NACC: u32 = UV * G * TM;
const NXP: u32 = UV * GT * TM;

var<workgroup> hs: array<vec4<f32>, 2u * BM * HQ>;  // [buffer][row][k / 4]
#if K_SPLIT
var<workgroup> red: array<f32, {{RED_SIZE}}>;       // [slice - 1][accumulator][invocation]
#endif

// The projections X W^T of this invocation's units and rows at step `step`.
fn load_projections(step: u32, d: u32, b0: u32, tx: u32, xp: ptr<function, array<f32, NXP>>) {
  let t = select(step, p.dims.y - 1u - step, has(F_REVERSE0 << d));
  for (var u = 0u; u < UV; u++) {
    let j = tx * UV + u;
    for (var m = 0u; m < TM; m++) {
      if (j < H && b0 + m < p.dims.z) {
        let xb = xw_index(t, d, b0 + m, j);
        for (var g = 0u; g < GT; g++) {
          (*xp)[(u * GT + g) * TM + m] = xw[xb + g * H];
        }
      }
    }
  }
}

fn h_entry(buffer: u32, row: u32, k: u32) -> f32 {
  return hs[buffer + row * HQ + k / 4u][k % 4u];
}

// acc[(u * G + g) * TM + m] += sum over k in [k0, k1) of h[row m][k] * R^T[k][g * H + j0 + u]
// (R^T starts at element 0 of its binding: RnnWeights::params).
fn product(k0: u32, k1: u32, cur: u32, ty: u32, w_base: u32, j0: u32, acc: ptr<function, array<f32, NACC>>) {
  let row_stride = GT * H;
  var k = k0;
  // Blocks of KB entries: all their weights are loaded before the first multiply (KB * G loads in
  // flight per invocation instead of one).
  for (; k + KB <= k1; k += KB) {
#if VEC4
    var w: array<vec4<f32>, KB * G>;
    for (var i = 0u; i < KB; i++) {
      for (var g = 0u; g < G; g++) {
        w[i * G + g] = weights4[(w_base + (k + i) * row_stride + g * H + j0) / 4u];
      }
    }
#else
    var w: array<f32, KB * G>;
    for (var i = 0u; i < KB; i++) {
      for (var g = 0u; g < G; g++) {
        w[i * G + g] = weights[w_base + (k + i) * row_stride + g * H + j0];
      }
    }
#endif
    for (var m = 0u; m < TM; m++) {
      let row = ty * TM + m;
      for (var i = 0u; i < KB; i++) {
        let a = h_entry(cur, row, k + i);
        for (var g = 0u; g < G; g++) {
#if VEC4
          for (var u = 0u; u < UV; u++) {
            (*acc)[(u * G + g) * TM + m] += w[i * G + g][u] * a;
          }
#else
          (*acc)[g * TM + m] += w[i * G + g] * a;
#endif
        }
      }
    }
  }
  for (; k < k1; k++) {  // the rest of the slice, one entry at a time
    for (var g = 0u; g < G; g++) {
#if VEC4
      let w = weights4[(w_base + k * row_stride + g * H + j0) / 4u];
#else
      let w = vec4<f32>(weights[w_base + k * row_stride + g * H + j0], 0.0, 0.0, 0.0);
#endif
      for (var m = 0u; m < TM; m++) {
        let a = h_entry(cur, ty * TM + m, k);
        for (var u = 0u; u < UV; u++) {
          (*acc)[(u * G + g) * TM + m] += w[u] * a;
        }
      }
    }
  }
}

@compute @workgroup_size({{WG_SIZE}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lidx: u32) {
  let S = p.dims.y;
  let B = p.dims.z;
  let d = wg.z;
  let t0 = lidx % NT0;
  let ks = lidx / NT0;
  let tx = t0 % UX;
  let ty = t0 / UX;
  let r0 = wg.y * BM;
  let b0 = r0 + ty * TM;
  let w_base = p.wts.w + d * H * GT * H;
  let k0 = min(H, ks * KL);
  let k1 = min(H, k0 + KL);

  // The initial state of the block's rows into buffer 0 (rows past B and entries past H stay zero).
  for (var i = lidx; i < BM * HP; i += WG) {
    let row = i / HP;
    let k = i % HP;
    var v = 0.0;
    if (k < H && r0 + row < B) {
      v = state[p.st.x + (d * B + r0 + row) * H + k];
    }
    hs[i / 4u][i % 4u] = v;
  }
  workgroupBarrier();

  for (var step = 0u; step < S; step++) {
    let odd = (step & 1u) == 1u;
    let h_in = select(p.st.x, p.st.y, odd);
    let h_out = select(p.st.y, p.st.x, odd);
    let cur = select(0u, BM * HQ, odd);
    let nxt = select(BM * HQ, 0u, odd);

    var xp: array<f32, NXP>;
#if PREFETCH_XP
    if (ks == 0u) {
      load_projections(step, d, b0, tx, &xp);
    }
#endif
    var acc: array<f32, NACC>;
    for (var i = 0u; i < NACC; i++) {
      acc[i] = 0.0;
    }
    product(k0, k1, cur, ty, w_base, tx * UV, &acc);
#if K_SPLIT
    if (ks > 0u) {
      for (var i = 0u; i < NACC; i++) {
        red[((ks - 1u) * NACC + i) * NT0 + t0] = acc[i];
      }
    }
    workgroupBarrier();
    if (ks == 0u) {
      for (var s = 0u; s + 1u < KS; s++) {
        for (var i = 0u; i < NACC; i++) {
          acc[i] += red[(s * NACC + i) * NT0 + t0];
        }
      }
    }
#endif
    if (ks == 0u) {
#if PREFETCH_XP
#else
      load_projections(step, d, b0, tx, &xp);
#endif
      for (var u = 0u; u < UV; u++) {
        let j = tx * UV + u;
        if (j < H && b0 < B) {
          var au: array<f32, {{ACC}}>;
          for (var i = 0u; i < G * TM; i++) {
            au[i] = acc[u * G * TM + i];
          }
          var xu: array<f32, GT * BT>;
          for (var i = 0u; i < GT * TM; i++) {
            xu[i] = xp[u * GT * TM + i];
          }
          let h_last = finish_units(step, b0 / TM, d, j, h_in, h_out, &au, &xu);
          // The new state (or the kept one past a sequence's end) for the next step's product: the
          // last row's as returned, the others this invocation's own writes, read back.
          for (var m = 0u; m < TM; m++) {
            if (b0 + m < B) {
              var h_new = h_last;
              if (m + 1u < TM) {
                h_new = state[h_out + (d * B + b0 + m) * H + j];
              }
              hs[nxt + (ty * TM + m) * HQ + j / 4u][j % 4u] = h_new;
            }
          }
        }
      }
    }
    workgroupBarrier();
  }
  if (p.dims.x == 0xffffffffu) {
    // Never taken: keeps every binding in the automatic layout, which all variants share.
    store_y(0u, 0.0);
    store_yh(0u, 0.0);
    store_yc(0u, 0.0);
  }
}
