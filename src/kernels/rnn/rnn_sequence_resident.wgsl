// Every timestep of an ONNX LSTM / GRU (linear_before_reset=1) / RNN in one dispatch with R^T held
// in registers for the whole sequence: a workgroup per block of BM batch rows of one direction
// (rnn_kernel.h, StepMode::resident).
//
// The row-sequence kernel (rnn_sequence_rows.wgsl) streams the whole R^T of its direction from L2
// into every workgroup at every step; at MP-SENet's GRU (R^T 192 KiB) that stream is the step's
// time. Here R^T is read once: invocation (j, s) keeps the entries of unit
// j's G gate columns for K slice s (SL = 4 * KQ consecutive k) in G * KQ vec4 registers, so a
// workgroup holds all of R^T (one direction's R^T must fit a multiprocessor's register file:
// rnn_step_tiling.h's kResidentMaxWeightBytes). A step is then, per row, KQ vec4 reads of h from
// workgroup memory and G * KQ dot products per invocation, a sum over the NS slices of a unit
// (consecutive invocations: subgroup shuffles, or workgroup memory without subgroups), and the cell
// (finish_units) applied by slice s for row s of the block (BM <= NS), all in parallel.
//
// The registers (named variables unrolled with the template's #for: arrays indexed in loops the GPU
// compiler may not unroll live in local memory, where the row-sequence kernel's TM > 1 ran several
// times slower), the layout of h in workgroup memory ([row][q][s], double-buffered here) and a step's
// products are rnn_register_slices / _weights / _product.wgsl's, shared with the cooperative kernel.
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
const UNITS: u32 = H;  // units per workgroup: all of them

var<workgroup> hs: array<vec4<f32>, 2u * BM * HQ>;
#include "rnn/rnn_register_slices.wgsl"

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

  let unit_ok = true;
#include "rnn/rnn_register_weights.wgsl"

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
  pre.bias = bias_terms(d, j);
#if CELL_LSTM
  pre.peep = peepholes(d, j);
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

    let hbase = cur;
    let sum_unit = j;
#include "rnn/rnn_register_product.wgsl"

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
