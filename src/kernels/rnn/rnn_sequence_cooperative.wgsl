// Every timestep of an ONNX LSTM / GRU (linear_before_reset=1) / RNN in one dispatch, R^T spread
// over the registers of many workgroups that run at the same time and trade h through global memory
// (rnn_kernel.h, StepMode::cooperative).
//
// The resident kernel (rnn_sequence_resident.wgsl) holds a direction's whole R^T in one workgroup,
// which caps it at what one multiprocessor's registers hold (192 KiB). Past that, every other kernel
// either streams R^T from L2 each step or pays a dependent dispatch per step (a floor of several
// microseconds on a GPU, more than the step's work at small batches). Here a workgroup owns JT hidden units (all G gates of them) of
// one direction and RC chunks of BM rows: invocation (jl, s) keeps unit jl's gate columns of R^T for K
// slice s in registers for the whole sequence, as the resident kernel does (rnn_register_*.wgsl;
// RC > 1 lets fewer workgroups serve more rows, but the chunks serialise: slower on every shape measured,
// so only forced tilings use it). The grid (ceil(H / JT) unit tiles, row
// blocks of BM * RC, directions) must be resident on the GPU at once (RnnKernel checks it
// with a probe dispatch of this very pipeline: cooperative_probe.h), since each workgroup waits for
// the h of the others' units.
//
// The exchange (rnn_exchange.wgsl): every step's h, each value published with its own readiness and
// waited for with a bound.
//
// Per step and chunk of BM rows: their h of the previous step into workgroup memory (every entry
// waited for), one barrier, G * KQ dot products per row and invocation, a sum over the NS slices of a
// unit (subgroup shuffles, or workgroup memory), the cell by slice s for row s (BM <= NS, c kept in
// workgroup memory), the new h stored to the exchange.
//
// Rendered with the cell flags of rnn_step.wgsl (PHASE_FUSED only), G (= GATES_TOTAL), BT = 1, H, KQ,
// NS (a power of two, NS * 4 * KQ >= H), JT, BM (<= NS), RC, RU (1 or 2, divides BM), WG_SIZE (= JT * NS),
// ACC (= G), ACTS, SUBGROUP_REDUCE (NS consecutive invocations share a subgroup), RED_SIZE,
// SPIN_LIMIT, UNIFORM_BINDING = 8. p.st.w: the exchange's first element in hx.
#if SUBGROUP_REDUCE
enable subgroups;
#endif
#include "rnn/rnn_cell.wgsl"
#include "rnn/rnn_exchange.wgsl"

const H: u32 = {{H}}u;
const KQ: u32 = {{KQ}}u;
const SL: u32 = 4u * KQ;
const NS: u32 = {{NS}}u;
const HQ: u32 = NS * KQ;  // vec4s of one row of h
const JT: u32 = {{JT}}u;
const BM: u32 = {{BM}}u;
const RC: u32 = {{RC}}u;  // chunks of BM rows per workgroup
const RU: u32 = {{RU}}u;  // rows per pass of the product loop (divides BM)
const WG: u32 = {{WG_SIZE}}u;
const UNITS: u32 = JT;  // units per workgroup
const EXCHANGE_ROW: u32 = H;

var<workgroup> hs: array<vec4<f32>, BM * HQ>;
var<workgroup> cs: array<f32, RC * JT * BM>;  // LSTM: c of [chunk][unit][row of the chunk]
#include "rnn/rnn_register_slices.wgsl"

@compute @workgroup_size({{WG_SIZE}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lidx: u32) {
  if (p.dims.x == PROBE) {
    probe_residency(lidx, groups);
    return;
  }
  let S = p.dims.y;
  let B = p.dims.z;
  let d = wg.z;
  let s = lidx % NS;
  let jl = lidx / NS;
  let j = wg.x * JT + jl;
  let unit_ok = j < H;
  let rows_base = wg.y * BM * RC;
  let w_base = p.wts.w + d * H * GT * H;
  let k0 = s * SL;

#include "rnn/rnn_register_weights.wgsl"

  // Slice s applies the cell to row s of each chunk; its unit's c lives in workgroup memory and
  // h_prev is read from workgroup memory.
  var pre: CellPreload;
  // (A unit past H, in the last unit tile, never applies the cell: clamped only to stay in bounds.)
  pre.bias = bias_terms(d, min(j, p.dims.w - 1u));
#if CELL_LSTM
  pre.peep = peepholes(d, min(j, p.dims.w - 1u));
  for (var rc = 0u; rc < RC; rc++) {
    let row = rows_base + rc * BM + s;
    if (unit_ok && s < BM && row < B) {
      cs[(rc * JT + jl) * BM + s] = state[p.st.z + (d * B + row) * H + j];
    }
  }
#endif
  var xu_next: array<f32, GT>;
  if (unit_ok && s < BM && rows_base + s < B && S > 0u) {
    xu_next = projections(0u, d, rows_base + s, j);
  }
  for (var step = 0u; step < S; step++) {
    let odd = (step & 1u) == 1u;
    let h_in = select(p.st.x, p.st.y, odd);
    let h_out = select(p.st.y, p.st.x, odd);
    for (var rc = 0u; rc < RC; rc++) {
      let r0 = rows_base + rc * BM;
      let my_row = r0 + s;
      let finishes = unit_ok && s < BM && my_row < B;

      // The projections of this invocation's row: loaded one chunk ahead (below), so the load's
      // latency hides behind a whole chunk's work.
      var xu = xu_next;
      {
        let last_chunk = rc + 1u == RC;
        let next_step = select(step, step + 1u, last_chunk);
        let next_row = rows_base + select(rc + 1u, 0u, last_chunk) * BM + s;
        if (unit_ok && s < BM && next_row < B && next_step < S) {
          xu_next = projections(next_step, d, next_row, j);
        }
      }

      // h of the chunk's rows: the initial state, then what the previous step published (rows past
      // B and entries past H stay zero).
      // (Loading all of an invocation's entries first and reloading the missing ones together, for
      // one L2 round trip per wait in principle, was slower on every shape measured.)
      for (var i = lidx; i < BM * HQ * 4u; i += WG) {
        let row = i / (HQ * 4u);
        let k = i % (HQ * 4u);
        var v = 0.0;
        if (k < H && r0 + row < B) {
          if (step == 0u) {
            v = state[p.st.x + (d * B + r0 + row) * H + k];
          } else {
            v = wait_h(exchange_index(step - 1u, d, r0 + row, k));
          }
        }
        hs[row * HQ + h_slot(k)][k % 4u] = v;
      }
      workgroupBarrier();

      let hbase = 0u;
      let sum_unit = jl;
#include "rnn/rnn_register_product.wgsl"

      if (finishes) {
        var au: array<f32, {{ACC}}>;
#for g G
        au[{{g}}] = total_{{g}};
#endfor
        pre.h_prev = hs[s * HQ + h_slot(j)][j % 4u];
#if CELL_LSTM
        pre.c = cs[(rc * JT + jl) * BM + s];
#endif
        let h_new = finish_units(step, my_row, d, j, h_in, h_out, &au, &xu, &pre);
#if CELL_LSTM
        cs[(rc * JT + jl) * BM + s] = pre.c;
#endif
        atomicStore(&hx[exchange_index(step, d, my_row, j)], published(h_new));
      }
      // hs is refilled by the next chunk or step.
      workgroupBarrier();
    }
  }
  if (p.dims.x == 0xffffffffu) {
    // Never taken: keeps every binding in the automatic layout, which all variants share.
    store_y(0u, 0.0);
    store_yh(0u, 0.0);
    store_yc(0u, 0.0);
  }
}
