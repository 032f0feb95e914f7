// Every timestep of an ONNX LSTM / GRU (linear_before_reset=1) / RNN in one dispatch with R^T held
// in registers for the whole sequence: a workgroup per block of BM batch rows of one direction
// (rnn_kernel.h, StepMode::resident).
//
// The row-sequence kernel (rnn_sequence_rows.wgsl) streams the whole R^T of its direction from L2
// into every workgroup at every step; at MP-SENet's GRU (R^T 192 KiB) that stream is the step's
// time (H200: ~7.7 us per step). Here R^T is read once: invocation (j, s) keeps the entries of unit
// j's G gate columns for K slice s (SL = 4 * KQ consecutive k) in G * KQ vec4 registers, so a
// workgroup holds all of R^T (one direction's R^T must fit a multiprocessor's register file:
// rnn_step_tiling.h's kResidentMaxWeightBytes). A step is then, per row, KQ vec4 reads of h from
// workgroup memory and G * KQ dot products per invocation, a sum over the NS slices of a unit
// (consecutive invocations: subgroup shuffles, or workgroup memory without subgroups), and the cell
// (finish_units) applied by slice s for row s of the block (BM <= NS), all in parallel.
//
// Register arrays would be indexed in loops the GPU compiler may not unroll (then they live in
// local memory: the row-sequence kernel's TM > 1 ran 2-10x slower), so the registers are named
// variables, unrolled with the template's #for.
//
// h of the block's rows in workgroup memory, double-buffered, laid out [buffer][row][q][s] (vec4
// q of slice s holds k = s * SL + 4q .. +3): the NS slices of one q are consecutive vec4s, so the
// reads of one instruction do not conflict.
//
// Rendered with the cell flags of rnn_step.wgsl (PHASE_FUSED only), G (= GATES_TOTAL), BT = 1, H, KQ,
// NS (a power of two, NS * 4 * KQ >= H), BM (<= NS), RU (1 or 2, divides BM), WG_SIZE (= H * NS), ACC (= G), ACTS,
// SUBGROUP_REDUCE (NS consecutive invocations share a subgroup), RED_SIZE.
#if SUBGROUP_REDUCE
enable subgroups;
#endif
#include "rnn/rnn_cell.wgsl"

const H: u32 = {{H}}u;
const KQ: u32 = {{KQ}}u;
const SL: u32 = 4u * KQ;
const NS: u32 = {{NS}}u;
const HQ: u32 = NS * KQ;  // vec4s of one row of h
const BM: u32 = {{BM}}u;
const RU: u32 = {{RU}}u;  // rows per pass of the product loop (divides BM)
const WG: u32 = {{WG_SIZE}}u;

var<workgroup> hs: array<vec4<f32>, 2u * BM * HQ>;
#if SUBGROUP_REDUCE
#else
var<workgroup> red: array<f32, {{RED_SIZE}}>;  // [gate][unit][slice] partial sums of one row
#endif

// Where entry k of a row of h lives in `hs` (vec4 index from the row's start, component k % 4).
fn h_slot(k: u32) -> u32 {
  return ((k % SL) / 4u) * NS + k / SL;
}

// R^T[k][column] of direction base w_base; zero past H (the padding of the last slice).
fn r_entry(w_base: u32, k: u32, column: u32) -> f32 {
  if (k < H) {
    return weights[w_base + k * GT * H + column];
  }
  return 0.0;
}

// The projections X W^T of unit j's gates for row b at step `step` of direction d.
fn projections(step: u32, d: u32, b: u32, j: u32) -> array<f32, GT> {
  let t = select(step, p.dims.y - 1u - step, (p.misc.y & (F_REVERSE0 << d)) != 0u);
  let xb = xw_index(t, d, b, j);
  var xu: array<f32, GT>;
  for (var g = 0u; g < GT; g++) {
    xu[g] = xw[xb + g * H];
  }
  return xu;
}

// The sum of v over the NS slices of this invocation's unit, in every one of them.
fn slice_sum(v: f32, j: u32, s: u32, g: u32) -> f32 {
#if SUBGROUP_REDUCE
  var total = v;
  for (var o = 1u; o < NS; o <<= 1u) {
    total += subgroupShuffleXor(total, o);
  }
  return total;
#else
  red[(g * H + j) * NS + s] = v;
  workgroupBarrier();
  var total = 0.0;
  for (var i = 0u; i < NS; i++) {
    total += red[(g * H + j) * NS + i];
  }
  workgroupBarrier();
  return total;
#endif
}

@compute @workgroup_size({{WG_SIZE}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lidx: u32) {
  let S = p.dims.y;
  let B = p.dims.z;
  let d = wg.z;
  let s = lidx % NS;
  let j = lidx / NS;
  let r0 = wg.y * BM;
  let w_base = p.wts.w + d * H * GT * H;
  let k0 = s * SL;

  // This invocation's part of R^T, once for the whole sequence.
#for g G
#for q KQ
  let r_{{g}}_{{q}} = vec4<f32>(r_entry(w_base, k0 + 4u * {{q}}u, {{g}}u * H + j),
                                r_entry(w_base, k0 + 4u * {{q}}u + 1u, {{g}}u * H + j),
                                r_entry(w_base, k0 + 4u * {{q}}u + 2u, {{g}}u * H + j),
                                r_entry(w_base, k0 + 4u * {{q}}u + 3u, {{g}}u * H + j));
#endfor
#endfor

  // The initial state of the block's rows into buffer 0 (rows past B and entries past H stay zero).
  for (var i = lidx; i < BM * HQ * 4u; i += WG) {
    let row = i / (HQ * 4u);
    let k = i % (HQ * 4u);
    var v = 0.0;
    if (k < H && r0 + row < B) {
      v = state[p.st.x + (d * B + r0 + row) * H + k];
    }
    hs[row * HQ + h_slot(k)][k % 4u] = v;
  }
  workgroupBarrier();

  // Slice s applies the cell to row s of the block; its unit's c stays in a register and h_prev is
  // read from workgroup memory (CellPreload: no dependent global read in a step).
  let my_row = r0 + s;
  let finishes = s < BM && my_row < B;
  var pre: CellPreload;
#if CELL_LSTM
  if (finishes) {
    pre.c = state[p.st.z + (d * B + my_row) * H + j];
  }
#endif
  var xu_next: array<f32, GT>;
  if (finishes && S > 0u) {
    xu_next = projections(0u, d, my_row, j);
  }
  for (var step = 0u; step < S; step++) {
    let odd = (step & 1u) == 1u;
    let h_in = select(p.st.x, p.st.y, odd);
    let h_out = select(p.st.y, p.st.x, odd);
    let cur = select(0u, BM * HQ, odd);
    let nxt = select(BM * HQ, 0u, odd);

    // The projections of this invocation's row, loaded a step ahead: the load's latency (most of a
    // short step's time when it was issued at the step's start) hides behind a whole step.
    var xu = xu_next;
    if (finishes && step + 1u < S) {
      xu_next = projections(step + 1u, d, my_row, j);
    }

#for g G
    var total_{{g}} = 0.0;
#endfor
    // RU rows at a time: their products and sums are independent chains that overlap.
    for (var m0 = 0u; m0 < BM; m0 += RU) {
      // One vec4 of h per row live at a time (R^T already holds G * KQ * 4 registers).
#for u RU
#for g G
      var a_{{u}}_{{g}} = 0.0;
#endfor
#endfor
#for q KQ
      {
#for u RU
        let h_{{u}} = hs[cur + (m0 + {{u}}u) * HQ + s + {{q}}u * NS];
#for g G
        a_{{u}}_{{g}} += dot(r_{{g}}_{{q}}, h_{{u}});
#endfor
#endfor
      }
#endfor
#for u RU
#for g G
      a_{{u}}_{{g}} = slice_sum(a_{{u}}_{{g}}, j, s, {{g}}u);
      if (m0 + {{u}}u == s) {
        total_{{g}} = a_{{u}}_{{g}};
      }
#endfor
#endfor
    }

    if (finishes) {
      var au: array<f32, {{ACC}}>;
#for g G
      au[{{g}}] = total_{{g}};
#endfor
      pre.h_prev = hs[cur + s * HQ + h_slot(j)][j % 4u];
      let h_new = finish_units(step, my_row, d, j, h_in, h_out, &au, &xu, &pre);
      hs[nxt + s * HQ + h_slot(j)][j % 4u] = h_new;
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
