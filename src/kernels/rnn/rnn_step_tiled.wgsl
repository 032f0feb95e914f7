// One timestep of an ONNX LSTM / GRU / RNN as a register-tiled GEMM (rnn_kernel.h, StepKernel::tiled):
// for batch sizes where the product H_prev R^T is a real GEMM (SCNet: B 85-864 rows, N = 4H, K = H).
// The dot-product kernel (rnn_step.wgsl) reuses each R^T entry it loads for at most BT = 4 rows, so
// a step of B = 864 rows reads R^T 216 times from L2 (432 MiB at H256); here a workgroup owns BM
// rows x BU units (all G gates of each unit, so the cell equations run in the epilogue) and reads
// its R^T slice once per step, staged through workgroup memory KT entries of K at a time together
// with the BM source rows; each invocation accumulates TM rows x TU units x G gates in registers.
// The next K tile is loaded into registers while the current one is multiplied (its L2 latency
// overlaps the FMAs). KS invocations may split each K tile (their partial sums meet in workgroup
// memory) so that small grids (B = 85) still have enough invocations.
//
// Workgroup: NT * KS invocations, NT = (BU / TU) * (BM / TM); invocation (tx, ty, ks) owns units
// u0 + tx + u * (BU / TU) (u < TU: consecutive invocations read consecutive R^T columns) and rows
// r0 + ty * TM + m (m < TM: finish_units' batch tile). Grid (ceil(H / BU), ceil(B / BM), D).
// Rendered with the cell / phase flags of rnn_step.wgsl, G, GATES_TOTAL, BT (= TM), TU, BM, BU, KT,
// KS, K_SPLIT, AP, A_VEC4 (KT a multiple of 4 KS), NA, NB (prefetch registers per invocation),
// WG_SIZE, ACC, ACTS.
#include "rnn/rnn_cell.wgsl"

const TM: u32 = BT;
const TU: u32 = {{TU}}u;
const BM: u32 = {{BM}}u;
const BU: u32 = {{BU}}u;
const KT: u32 = {{KT}}u;
const KS: u32 = {{KS}}u;
const UX: u32 = BU / TU;
const NT: u32 = UX * (BM / TM);
const WG: u32 = NT * KS;
// Padded source row: the rows an invocation and its neighbours read sit in different banks
// (KT + 4 keeps the rows 16-byte aligned for the vec4 loads of A_VEC4).
const AP: u32 = {{AP}}u;
const NACC: u32 = TU * G * TM;
const NA: u32 = {{NA}}u;  // ceil(BM * KT / WG)
const NB: u32 = {{NB}}u;  // ceil(KT * G * BU / WG)

#if A_VEC4
var<workgroup> src_tile4: array<vec4<f32>, BM * AP / 4u>;  // [row][k / 4]
#else
var<workgroup> src_tile: array<f32, BM * AP>;     // [row][k]
#endif
var<workgroup> r_tile: array<f32, KT * G * BU>;   // [k][g][unit]
#if K_SPLIT
var<workgroup> red: array<f32, (KS - 1u) * NACC * NT>;
#endif

// The workgroup's share of K tile k0 (source rows and R^T columns) into registers; zero outside.
fn load_tile(k0: u32, lidx: u32, r0: u32, u0: u32, d: u32, pa: ptr<function, array<f32, NA>>,
             pb: ptr<function, array<f32, NB>>) {
  let B = p.dims.z;
  let H = p.dims.w;
  let src_base = p.st.w + d * B * H;
  for (var n = 0u; n < NA; n++) {
    let i = lidx + n * WG;
    let row = i / KT;
    let k = k0 + i % KT;
    var v = 0.0;
    if (row < BM && r0 + row < B && k < H) {
      v = state[src_base + (r0 + row) * H + k];
    }
    (*pa)[n] = v;
  }
  let row_stride = GT * H;
  for (var n = 0u; n < NB; n++) {
    let i = lidx + n * WG;
    let uu = i % BU;
    let g = (i / BU) % G;
    let k = k0 + i / (BU * G);
    var v = 0.0;
    if (k < min(H, k0 + KT) && u0 + uu < H) {
      v = weights[(d * H + k) * row_stride + p.wts.w + g * H + u0 + uu];
    }
    (*pb)[n] = v;
  }
}

fn store_tile(lidx: u32, pa: ptr<function, array<f32, NA>>, pb: ptr<function, array<f32, NB>>) {
  for (var n = 0u; n < NA; n++) {
    let i = lidx + n * WG;
    if (i < BM * KT) {
#if A_VEC4
      let e = (i / KT) * AP + i % KT;
      src_tile4[e / 4u][e % 4u] = (*pa)[n];
#else
      src_tile[(i / KT) * AP + i % KT] = (*pa)[n];
#endif
    }
  }
  for (var n = 0u; n < NB; n++) {
    let i = lidx + n * WG;
    if (i < KT * G * BU) {
      r_tile[i] = (*pb)[n];
    }
  }
}

@compute @workgroup_size({{WG_SIZE}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lidx: u32) {
  let step = p.dims.x;
  let S = p.dims.y;
  let B = p.dims.z;
  let H = p.dims.w;
  let d = wg.z;
  let t = lidx % NT;
  let ks = lidx / NT;
  let tx = t % UX;
  let ty = t / UX;
  let u0 = wg.x * BU;
  let r0 = wg.y * BM;
  let b0 = r0 + ty * TM;

  // Slice 0 loads its projections first: their DRAM latency overlaps the product.
  var xp: array<f32, TU * GT * TM>;
  if (ks == 0u) {
    let tt = select(step, S - 1u - step, has(F_REVERSE0 << d));
    for (var u = 0u; u < TU; u++) {
      let j = u0 + tx + u * UX;
      for (var m = 0u; m < TM; m++) {
        if (j < H && b0 + m < B) {
          let xb = xw_index(tt, d, b0 + m, j);
          for (var g = 0u; g < GT; g++) {
            xp[(u * GT + g) * TM + m] = xw[xb + g * H];
          }
        }
      }
    }
  }

  var acc: array<f32, NACC>;
  for (var i = 0u; i < NACC; i++) {
    acc[i] = 0.0;
  }
  var pa: array<f32, NA>;
  var pb: array<f32, NB>;
  load_tile(0u, lidx, r0, u0, d, &pa, &pb);
  for (var k0 = 0u; k0 < H; k0 += KT) {
    workgroupBarrier();  // the previous tile has been consumed
    store_tile(lidx, &pa, &pb);
    workgroupBarrier();
    if (k0 + KT < H) {
      load_tile(k0 + KT, lidx, r0, u0, d, &pa, &pb);  // in flight during the FMAs below
    }
#if A_VEC4
    // Groups of 4 entries of K per slice: each source row is one 16-byte workgroup load per group
    // (a quarter of the load instructions; the product is bound by workgroup-memory loads).
    for (var kq = 0u; kq < KT / (4u * KS); kq++) {
      let k4 = (kq * KS + ks) * 4u;
      var a4: array<vec4<f32>, TM>;
      for (var m = 0u; m < TM; m++) {
        a4[m] = src_tile4[((ty * TM + m) * AP + k4) / 4u];
      }
      for (var q = 0u; q < 4u; q++) {
        for (var g = 0u; g < G; g++) {
          for (var u = 0u; u < TU; u++) {
            let w = r_tile[((k4 + q) * G + g) * BU + tx + u * UX];
            for (var m = 0u; m < TM; m++) {
              acc[(u * G + g) * TM + m] += w * a4[m][q];
            }
          }
        }
      }
    }
#else
    for (var kq = 0u; kq < KT / KS; kq++) {  // a constant trip count (KS divides KT)
      let k = kq * KS + ks;
      var a: array<f32, TM>;
      for (var m = 0u; m < TM; m++) {
        a[m] = src_tile[(ty * TM + m) * AP + k];
      }
      for (var g = 0u; g < G; g++) {
        for (var u = 0u; u < TU; u++) {
          let w = r_tile[(k * G + g) * BU + tx + u * UX];
          for (var m = 0u; m < TM; m++) {
            acc[(u * G + g) * TM + m] += w * a[m];
          }
        }
      }
    }
#endif
  }
#if K_SPLIT
  if (ks > 0u) {
    for (var i = 0u; i < NACC; i++) {
      red[((ks - 1u) * NACC + i) * NT + t] = acc[i];
    }
  }
  workgroupBarrier();
  if (ks == 0u) {
    for (var s = 0u; s + 1u < KS; s++) {
      for (var i = 0u; i < NACC; i++) {
        acc[i] += red[(s * NACC + i) * NT + t];
      }
    }
  }
#endif
  if (ks == 0u) {
    for (var u = 0u; u < TU; u++) {
      let j = u0 + tx + u * UX;
      if (j < H && b0 < B) {
        var au: array<f32, {{ACC}}>;
        for (var i = 0u; i < G * TM; i++) {
          au[i] = acc[u * G * TM + i];
        }
        var xu: array<f32, GT * BT>;
        for (var i = 0u; i < GT * TM; i++) {
          xu[i] = xp[u * GT * TM + i];
        }
        finish_units(step, b0 / TM, d, j, p.st.x, p.st.y, &au, &xu);
      }
    }
  }
  if (p.dims.x == 0xffffffffu) {
    // Never taken: keeps every binding in the automatic layout, which all variants share.
    store_y(0u, 0.0);
    store_yh(0u, 0.0);
    store_yc(0u, 0.0);
  }
}
