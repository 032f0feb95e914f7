// The shared part of the recurrent step kernels (rnn_step.wgsl: dot-product tiles, rnn_step_tiled.wgsl:
// register-tiled GEMM): bindings, uniforms, and finish_units, which applies the cell equations of the
// ONNX spec to one hidden unit j of BT batch rows given the recurrent products `acc` [G][BT] and the
// projections `xp` [GT][BT], and writes the state and the outputs. Needs BT, G, GT, ACC, ACTS.
#include "rnn/rnn_activation.wgsl"

@group(0) @binding(0) var<storage, read> xw: array<f32>;       // input projection X W^T
@group(0) @binding(1) var<storage, read> weights: array<f32>;  // R^T, biases, peepholes
@group(0) @binding(2) var<storage, read_write> state: array<f32>;
@group(0) @binding(3) var<storage, read> seq_lens: array<i32>;

struct StepParams {
  dims: vec4<u32>,     // step, seq, batch, hidden
  misc: vec4<u32>,     // directions, flags (as FLAGS below, compiled in), xw row stride, xw offset
  xw_base: vec4<u32>,  // xw base of direction 0, 1; first time of the projected chunk, direction 0, 1
  st: vec4<u32>,       // state offsets: h_in, h_out, c, source vector of the product
  wts: vec4<u32>,      // bias offset, peephole offset, seq_lens offset, first R^T column
  outs: vec4<u32>,     // y, yh, yc offsets; GRU scratch: r (.) H_prev, followed by z
  clip: vec4<f32>,     // clip bound
  act: array<vec4<f32>, 6>,
}
#ifdef UNIFORM_BINDING
@group(0) @binding({{UNIFORM_BINDING}}) var<uniform> p: StepParams;  // after extra storage bindings
#else
@group(0) @binding(7) var<uniform> p: StepParams;
#endif

const F_SEQ_LENS = 1u;
const F_Y = 2u;
const F_YH = 4u;
const F_YC = 8u;
const F_REVERSE0 = 16u;
const F_INPUT_FORGET = 64u;
const F_PEEPHOLE = 128u;
const F_CLIP = 256u;
const F_LAYOUT1 = 512u;
const F_TIME_MAJOR_XW = 1024u;
const F_Y_DIRECTIONS_INNER = 2048u;  // Y [S, B, D, H]

const BT: u32 = {{BT}}u;
const G: u32 = {{G}}u;
const GT: u32 = {{GATES_TOTAL}}u;  // gates per direction in R and the projection

// The layer's flags (StepParams.misc.y), compiled in: every test of them folds away, so the cell is
// straight-line code the GPU compiler can schedule across gates (a branch on a uniform splits it).
const FLAGS: u32 = {{FLAGS}}u;

fn has(flag: u32) -> bool {
  return (FLAGS & flag) != 0u;
}

fn gate_clip(x: f32) -> f32 {
  if (has(F_CLIP)) {
    return clamp(x, -p.clip.x, p.clip.x);
  }
  return x;
}

// Y's store activation (RnnSpec::y_activation; the identity without one), compiled in.
fn y_activation(x: f32) -> f32 {
  return {{Y_ACTIVATION}};
}

// Index of gate 0 of unit j in the projection X W^T for row b at time t of direction d.
fn xw_index(t: u32, d: u32, b: u32, j: u32) -> u32 {
  var xrow = b * p.dims.y + t;
  if (has(F_TIME_MAJOR_XW)) {
    xrow = (t - select(p.xw_base.z, p.xw_base.w, d == 1u)) * p.dims.z + b;
  }
  return p.misc.w + select(p.xw_base.x, p.xw_base.y, d == 1u) + xrow * p.misc.z + j;
}

// Activation `slot` of direction d (unclipped: the LSTM's h = o * act2(c)). DEFAULT_ACTS: the spec's
// defaults (f = sigmoid, g = h = tanh; RNN's f = tanh) compiled in, no switch on a uniform.
fn act_unclipped(d: u32, slot: u32, x: f32) -> f32 {
#if DEFAULT_ACTS
#if CELL_RNN
  return rnn_tanh(x);
#else
  if (slot == 0u) {
    return rnn_sigmoid(x);
  }
  return rnn_tanh(x);
#endif
#else
  return rnn_activate(x, p.act[d * {{ACTS}}u + slot]);
#endif
}

fn act(d: u32, slot: u32, x: f32) -> f32 {
  return act_unclipped(d, slot, gate_clip(x));
}


// The bias terms of unit j of direction d, summed where the spec adds them: LSTM i, o, f, c (Wb + Rb);
// GRU z, r (Wb + Rb), Wb_h, Rb_h; RNN Wb + Rb.
fn bias_terms(d: u32, j: u32) -> vec4<f32> {
  let H = p.dims.w;
  let bias = p.wts.x + d * 2u * GT * H;
  var bi: array<f32, 2 * GT>;
  for (var i = 0u; i < 2u * GT; i++) {
    bi[i] = weights[bias + i * H + j];
  }
#if CELL_LSTM
  return vec4<f32>(bi[0] + bi[4], bi[1] + bi[5], bi[2] + bi[6], bi[3] + bi[7]);
#endif
#if CELL_GRU
  return vec4<f32>(bi[0] + bi[3], bi[1] + bi[4], bi[2], bi[5]);
#endif
#if CELL_RNN
  return vec4<f32>(bi[0] + bi[1], 0.0, 0.0, 0.0);
#endif
}

// LSTM peepholes i, o, f of unit j of direction d (zeros without P).
fn peepholes(d: u32, j: u32) -> vec3<f32> {
  if (has(F_PEEPHOLE)) {
    let H = p.dims.w;
    let peep = p.wts.y + d * 3u * H;
    return vec3<f32>(weights[peep + j], weights[peep + H + j], weights[peep + 2u * H + j]);
  }
  return vec3<f32>(0.0);
}

#if CELL_PRELOADED
// What a kernel that keeps one row's state on chip (the resident and cooperative kernels, BT = 1)
// passes instead of finish_units reading it from memory every step: h_prev and c (updated to c_new),
// and the unit's bias terms and peepholes, loaded once before the steps (a load per step, even an L1
// hit, sits on the step's critical path).
struct CellPreload {
  h_prev: f32,
  c: f32,
  bias: vec4<f32>,
  peep: vec3<f32>,
}
#endif

// The cell equations for unit j of the batch tile's rows, given the products `acc` (slice 0's); returns the
// new h of the last row of the tile (the one row of the resident kernel, which keeps it on chip).
fn finish_units(step: u32, btile: u32, d: u32, j: u32, h_in: u32, h_out: u32, acc: ptr<function, array<f32, {{ACC}}>>,
                xp: ptr<function, array<f32, GT * BT>>
#if CELL_PRELOADED
                , pre: ptr<function, CellPreload>
#endif
                ) -> f32 {
  let S = p.dims.y;
  let B = p.dims.z;
  let H = p.dims.w;
  let b0 = btile * BT;
  let reverse = has(F_REVERSE0 << d);
  let t = select(step, S - 1u - step, reverse);
  let D = p.misc.x;
  // Per unit, not per row: loaded once for the tile's rows (or preloaded).
#if CELL_PRELOADED
  let bt = (*pre).bias;
  let pp = (*pre).peep;
#else
  let bt = bias_terms(d, j);
#if CELL_LSTM
  let pp = peepholes(d, j);
#endif
#endif
  var last_h = 0.0;
  for (var bb = 0u; bb < BT; bb++) {
    let b = b0 + bb;
    if (b >= B) {
      break;
    }
    var valid = true;
    if (has(F_SEQ_LENS)) {
      valid = i32(t) < seq_lens[p.wts.z + b];
    }
    let sidx = (d * B + b) * H + j;
#if CELL_PRELOADED
    let h_prev = (*pre).h_prev;
#else
    let h_prev = state[h_in + sidx];
#endif
    var h_new = h_prev;
#if CELL_LSTM
#if CELL_PRELOADED
    let c_prev = (*pre).c;
#else
    let c_prev = state[p.st.z + sidx];
#endif
    var c_new = c_prev;
    if (valid) {
      // ONNX LSTM, gates i, o, f, c.
      var pre_i = (*xp)[0u * BT + bb] + (*acc)[0u * BT + bb] + bt[0];
      var pre_o = (*xp)[1u * BT + bb] + (*acc)[1u * BT + bb] + bt[1];
      var pre_f = (*xp)[2u * BT + bb] + (*acc)[2u * BT + bb] + bt[2];
      let pre_c = (*xp)[3u * BT + bb] + (*acc)[3u * BT + bb] + bt[3];
      if (has(F_PEEPHOLE)) {
        pre_i += pp[0] * c_prev;
        pre_f += pp[2] * c_prev;
      }
      let i_gate = act(d, 0u, pre_i);
      var f_gate = 1.0 - i_gate;
      if (!has(F_INPUT_FORGET)) {
        f_gate = act(d, 0u, pre_f);
      }
      c_new = f_gate * c_prev + i_gate * act(d, 1u, pre_c);
      if (has(F_PEEPHOLE)) {
        pre_o += pp[1] * c_new;
      }
      h_new = act(d, 0u, pre_o) * act_unclipped(d, 2u, c_new);
      state[p.st.z + sidx] = c_new;
    }
#if CELL_PRELOADED
    (*pre).c = c_new;
#endif
#endif
#if CELL_GRU
#if PHASE_ZR
    // ONNX GRU, linear_before_reset = 0, first half: z and r; keeps z and r (.) H_prev.
    if (valid) {
      let z = act(d, 0u, (*xp)[0u * BT + bb] + (*acc)[bb] + bt[0]);
      let r = act(d, 0u, (*xp)[1u * BT + bb] + (*acc)[BT + bb] + bt[1]);
      state[p.outs.w + sidx] = r * h_prev;
      state[p.outs.w + D * B * H + sidx] = z;
    }
#endif
#if PHASE_H
    // Second half: h = g(X W_h + (r (.) H_prev) R_h^T + Rb_h + Wb_h).
    if (valid) {
      let z = state[p.outs.w + D * B * H + sidx];
      let hh = act(d, 1u, (*xp)[2u * BT + bb] + (*acc)[bb] + bt[2] + bt[3]);
      h_new = (1.0 - z) * hh + z * h_prev;
    }
#endif
#if PHASE_FUSED
    // ONNX GRU, linear_before_reset = 1: h = g(X W_h + r (.) (H_prev R_h^T + Rb_h) + Wb_h).
    if (valid) {
      let z = act(d, 0u, (*xp)[0u * BT + bb] + (*acc)[bb] + bt[0]);
      let r = act(d, 0u, (*xp)[1u * BT + bb] + (*acc)[BT + bb] + bt[1]);
      let lin = (*acc)[2u * BT + bb] + bt[3];
      let hh = act(d, 1u, (*xp)[2u * BT + bb] + r * lin + bt[2]);
      h_new = (1.0 - z) * hh + z * h_prev;
    }
#endif
#endif
#if CELL_RNN
    if (valid) {
      h_new = act(d, 0u, (*xp)[0u * BT + bb] + (*acc)[bb] + bt[0]);
    }
#endif
    last_h = h_new;
#if PHASE_ZR
#else
    state[h_out + sidx] = h_new;
    if (has(F_Y)) {
      var yi = ((t * D + d) * B + b) * H + j;
      if (has(F_LAYOUT1)) {
        yi = ((b * S + t) * D + d) * H + j;
      }
      if (has(F_Y_DIRECTIONS_INNER)) {
        yi = ((t * B + b) * D + d) * H + j;
      }
      store_y(p.outs.x + yi, y_activation(select(0.0, h_new, valid)));
    }
    var si = sidx;
    if (has(F_LAYOUT1)) {
      si = (b * D + d) * H + j;
    }
    if (has(F_YH)) {
      store_yh(p.outs.y + si, h_new);
    }
#if CELL_LSTM
    if (has(F_YC)) {
      store_yc(p.outs.z + si, c_new);
    }
#endif
#endif
  }
  return last_h;
}
