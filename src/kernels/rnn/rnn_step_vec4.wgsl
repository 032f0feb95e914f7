// One timestep of an ONNX LSTM / GRU (linear_before_reset = 1) / RNN as a GEMM tile with the cell in
// its epilogue (rnn_kernel.h, StepKernel::vec4), for the batches where H_prev R^T is a real GEMM
// (SCNet's band LSTMs: B = 433-864 rows, N = 4H, K = H).
//
// It is the GEMM core's tile (gemm_tiled.wgsl: TM rows x NV vec4s per invocation) with the vec4's
// lanes holding the G gates of one hidden unit (G <= 4; GRU and RNN leave lanes empty): per k an
// invocation reads NV vec4s of the staged R^T tile and TM / 4 vec4s of the staged rows, and its
// accumulators hold every gate of its units, so the cell equations (finish_units) run right after
// the product and a step stays one dispatch: no gates buffer written and read back, no second
// dependent dispatch (the GEMM step, StepKernel::gemm, pays both). R^T keeps its gate-major layout
// [D][H][GT H]; the R^T tile is gathered gate by gate (coalesced along the units) into one vec4 per
// (k, unit).
//
// K tiles of BK entries are staged in workgroup memory; with PREFETCH the next tile is loaded into
// registers while the current one is multiplied (more registers per invocation, fewer resident).
// DOUBLE_BUFFER (with PREFETCH) keeps two copies of the staged tiles: tile t is multiplied out of copy
// t % 2 while tile t + 1 goes from registers into the other, so a K tile costs one workgroup barrier
// instead of two (twice the workgroup memory).
// KS invocation slices may split each K tile (slice s takes k = s, s + KS, ...) for grids too small
// to fill the GPU; their partial sums meet in workgroup memory one unit at a time.
//
// PERSISTENT: every step in one dispatch. The tiles stay with their workgroups for the whole sequence
// and a step's h goes to the exchange (rnn_exchange.wgsl, as the cooperative kernel's): a workgroup
// starts step t as soon as the h of step t - 1 of its rows is there (every staged entry waited for),
// so a step costs no dispatch and no grid-wide drain, only the dependencies it really has. The grid
// must be resident all at once (the recorder probes it); R^T is still read from L2 each step.
//
// Workgroup: WG_X x WG_Y x KS invocations, lidx = (ks * WG_Y + ty) * WG_X + tx; invocation (tx, ty, ks)
// owns units u0 + tx + v WG_X (v < NV: neighbouring invocations take neighbouring units, so the
// epilogue's loads and stores coalesce) and rows r0 + TM ty .. + TM - 1 (finish_units' batch tile).
// Block BM = TM WG_Y rows x BU = NV WG_X units; grid (ceil(H / BU), ceil(B / BM), D).
// Rendered with the cell flags of rnn_step.wgsl (fused phase), G = GT, BT (= TM), TQ (= TM / 4), NV,
// WG_X, WG_Y, BK, KS, K_SPLIT, NA, NB (staging registers per invocation), PREFETCH, DOUBLE_BUFFER, COPIES
// (1, or 2 with DOUBLE_BUFFER), WG_SIZE, ACC, ACTS, PERSISTENT (then also H, SPIN_LIMIT and
// UNIFORM_BINDING = 8; p.st.w is the exchange's first element in hx).
#include "rnn/rnn_cell.wgsl"
#if PERSISTENT
#include "rnn/rnn_exchange.wgsl"
const EXCHANGE_ROW: u32 = {{H}}u;
#endif

const TM: u32 = BT;
const NV: u32 = {{NV}}u;
const WG_X: u32 = {{WG_X}}u;
const WG_Y: u32 = {{WG_Y}}u;
const BK: u32 = {{BK}}u;
const KS: u32 = {{KS}}u;
const BM: u32 = WG_Y * TM;
const BU: u32 = WG_X * NV;
const NT: u32 = WG_X * WG_Y;
const WG: u32 = NT * KS;
const NA: u32 = {{NA}}u;  // ceil(BM * BK / WG)
const NB: u32 = {{NB}}u;  // ceil(BK * BU / WG)

// [k][row / 4]: 4 rows of one k; rows padded by 4 (BMP) so that the stores of neighbouring k (the
// coalesced loads below walk k fastest) fall in different banks.
const BMP: u32 = BM + 4u;
const A_COPY: u32 = BK * BMP / 4u;  // vec4s of one copy of the staged rows
const B_COPY: u32 = BK * BU;        // and of the R^T tile
var<workgroup> tile_a: array<vec4<f32>, {{COPIES}}u * A_COPY>;
var<workgroup> tile_b: array<vec4<f32>, {{COPIES}}u * B_COPY>;  // [copy][k][unit]: the unit's G gates
#if K_SPLIT
var<workgroup> red: array<vec4<f32>, (KS - 1u) * TM * NT>;  // one unit's partial sums of slices 1..
#endif

// The workgroup's share of K tile k0 into registers; zero outside the matrices. Consecutive
// invocations take consecutive k of a row of H_prev and consecutive units of R^T (coalesced loads).
// PERSISTENT: the rows of h of step `step` - 1 come from the exchange (the initial state at step 0).
fn load_tile(step: u32, k0: u32, lidx: u32, r0: u32, u0: u32, d: u32, pa: ptr<function, array<f32, NA>>,
             pb: ptr<function, array<vec4<f32>, NB>>) {
  let B = p.dims.z;
  let H = p.dims.w;
#if PERSISTENT
  let src_base = p.st.x + d * B * H;
#else
  let src_base = p.st.w + d * B * H;
#endif
  for (var n = 0u; n < NA; n++) {
    let i = lidx + n * WG;
    let row = i / BK;
    let k = k0 + i % BK;
    var v = 0.0;
    if (i < BM * BK && r0 + row < B && k < H) {
#if PERSISTENT
      if (step > 0u) {
        v = wait_h(exchange_index(step - 1u, d, r0 + row, k));
      } else {
        v = state[src_base + (r0 + row) * H + k];
      }
#else
      v = state[src_base + (r0 + row) * H + k];
#endif
    }
    (*pa)[n] = v;
  }
  let row_stride = GT * H;
  for (var n = 0u; n < NB; n++) {
    let i = lidx + n * WG;
    let uu = i % BU;
    let k = k0 + i / BU;
    var v = vec4<f32>(0.0);
    if (i < BK * BU && k < H && u0 + uu < H) {
      let base = (d * H + k) * row_stride + u0 + uu;
      for (var g = 0u; g < G; g++) {
        v[g] = weights[base + g * H];
      }
    }
    (*pb)[n] = v;
  }
}

// The registers into copy `copy` of the staged tiles.
fn store_tile(lidx: u32, copy: u32, pa: ptr<function, array<f32, NA>>, pb: ptr<function, array<vec4<f32>, NB>>) {
  for (var n = 0u; n < NA; n++) {
    let i = lidx + n * WG;
    if (i < BM * BK) {
      let e = (i % BK) * BMP + i / BK;  // i = row BK + k
      tile_a[copy * A_COPY + e / 4u][e % 4u] = (*pa)[n];
    }
  }
  for (var n = 0u; n < NB; n++) {
    let i = lidx + n * WG;
    if (i < BK * BU) {
      tile_b[copy * B_COPY + i] = (*pb)[n];  // i = k BU + unit
    }
  }
}

@compute @workgroup_size({{WG_SIZE}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lidx: u32) {
  let S = p.dims.y;
  let B = p.dims.z;
  let H = p.dims.w;
  let d = wg.z;
  let t = lidx % NT;
  let ks = lidx / NT;
  let tx = t % WG_X;
  let ty = t / WG_X;
  let u0 = wg.x * BU;
  let r0 = wg.y * BM;
#if PERSISTENT
  if (p.dims.x == PROBE) {
    probe_residency(lidx, groups);
    return;
  }
  for (var step = 0u; step < S; step++) {
  let odd = (step & 1u) == 1u;
  let h_in = select(p.st.x, p.st.y, odd);
  let h_out = select(p.st.y, p.st.x, odd);
#else
  {
  let step = p.dims.x;
  let h_in = p.st.x;
  let h_out = p.st.y;
#endif

  // [row][unit]: the unit's gates. Zeroed explicitly: a declaration inside the step loop was not
  // zero-initialised again on every iteration (on lavapipe PERSISTENT's accumulators carried the
  // previous step's product).
  var acc = array<vec4<f32>, TM * NV>();
  var pa: array<f32, NA>;
  var pb: array<vec4<f32>, NB>;
#if DOUBLE_BUFFER
  load_tile(step, 0u, lidx, r0, u0, d, &pa, &pb);
  store_tile(lidx, 0u, &pa, &pb);
  workgroupBarrier();
#else
#if PREFETCH
  load_tile(step, 0u, lidx, r0, u0, d, &pa, &pb);
#endif
#endif
  for (var k0 = 0u; k0 < H; k0 += BK) {
#if DOUBLE_BUFFER
    let copy = (k0 / BK) % 2u;
    if (k0 + BK < H) {
      load_tile(step, k0 + BK, lidx, r0, u0, d, &pa, &pb);  // in flight during the FMAs below
    }
#else
    let copy = 0u;
    workgroupBarrier();  // the previous tile has been consumed
#if PREFETCH
    store_tile(lidx, 0u, &pa, &pb);
    workgroupBarrier();
    if (k0 + BK < H) {
      load_tile(step, k0 + BK, lidx, r0, u0, d, &pa, &pb);  // in flight during the FMAs below
    }
#else
    load_tile(step, k0, lidx, r0, u0, d, &pa, &pb);
    store_tile(lidx, 0u, &pa, &pb);
    workgroupBarrier();
#endif
#endif
    // `acc` is indexed by constants only (the template's #for): one dynamic index would move the
    // whole array to local memory.
    for (var kk = 0u; kk < BK / KS; kk++) {
      let k = kk * KS + ks;
#for v NV
      let b{{v}} = tile_b[copy * B_COPY + k * BU + tx + {{v}}u * WG_X];
#endfor
#for q TQ
      {
        let a = tile_a[copy * A_COPY + k * (BMP / 4u) + ty * (TM / 4u) + {{q}}u];
#for i 4
#for v NV
        acc[(4u * {{q}}u + {{i}}u) * NV + {{v}}u] = fma(vec4<f32>(a[{{i}}]), b{{v}}, acc[(4u * {{q}}u + {{i}}u) * NV + {{v}}u]);
#endfor
#endfor
      }
#endfor
    }
#if DOUBLE_BUFFER
    // The other copy was last read in the previous tile, before the barrier that ended it.
    if (k0 + BK < H) {
      store_tile(lidx, 1u - copy, &pa, &pb);
    }
    workgroupBarrier();
#endif
  }
#if K_SPLIT
#for v NV
  workgroupBarrier();
  if (ks > 0u) {
#for m BT
    red[((ks - 1u) * TM + {{m}}u) * NT + t] = acc[{{m}}u * NV + {{v}}u];
#endfor
  }
  workgroupBarrier();
  if (ks == 0u) {
    for (var s = 0u; s + 1u < KS; s++) {
#for m BT
      acc[{{m}}u * NV + {{v}}u] += red[(s * TM + {{m}}u) * NT + t];
#endfor
    }
  }
#endfor
#endif
  let b0 = r0 + ty * TM;
  if (ks == 0u && b0 < B) {
    let tt = select(step, S - 1u - step, has(F_REVERSE0 << d));
#for v NV
    if (u0 + tx + {{v}}u * WG_X < H) {
      let j = u0 + tx + {{v}}u * WG_X;
      var au: array<f32, {{ACC}}>;  // [gate][row]
#for m BT
#for g G
      au[{{g}}u * TM + {{m}}u] = acc[{{m}}u * NV + {{v}}u][{{g}}];
#endfor
#endfor
      var xu: array<f32, GT * BT>;
      for (var m = 0u; m < TM; m++) {
        if (b0 + m < B) {
          let xb = xw_index(tt, d, b0 + m, j);
          for (var g = 0u; g < GT; g++) {
            xu[g * TM + m] = xw[xb + g * H];
          }
        }
      }
      finish_units(step, b0 / TM, d, j, h_in, h_out, &au, &xu);
#if PERSISTENT
      // This invocation's rows of h for the other workgroups (finish_units stored them to h_out,
      // h_prev where a sequence has ended).
      for (var m = 0u; m < TM; m++) {
        if (b0 + m < B) {
          atomicStore(&hx[exchange_index(step, d, b0 + m, j)], published(state[h_out + (d * B + b0 + m) * H + j]));
        }
      }
#endif
    }
#endfor
  }
#if PERSISTENT
  // Every invocation's h of this step is published before any starts the next step's waits: a wait
  // for a unit of this very workgroup must not spin ahead of its publisher (lavapipe runs a workgroup's
  // invocations in turns, switching only at barriers).
  workgroupBarrier();
#endif
  }  // the step
  if (p.dims.x == 0xffffffffu) {
    // Never taken: keeps every binding in the automatic layout, which all variants share.
    store_y(0u, 0.0);
    store_yh(0u, 0.0);
    store_yc(0u, 0.0);
  }
}
