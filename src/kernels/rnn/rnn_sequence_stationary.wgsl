// Every timestep of an ONNX LSTM / GRU (linear_before_reset=1) / RNN in one dispatch for batches of
// tens to hundreds of rows, with R^T held in workgroup memory for the whole sequence ("weight
// stationary"; rnn_kernel.h, StepMode::stationary).
//
// The cooperative kernel (rnn_sequence_cooperative.wgsl) keeps R^T in registers sliced along K, which
// suits a few rows per workgroup; with SCNet's 85 rows (H512 time LSTM) its grid does not fit the GPU
// at once, and chunks of rows serialise. Here a workgroup owns JT hidden units of one direction and
// every batch row: its slice of R^T (H x JT, a vec4 of gates per (k, unit): G <= 4) is loaded into
// workgroup memory once, and per step the rows' h of the previous step streams through workgroup
// memory in K tiles of BK (from the exchange: the other workgroups' units), as the GEMM core streams
// A. Invocation (u, rg, ks) accumulates TM rows x unit u (TM vec4s, one per row, holding the gates)
// over K slice ks (k = ks, ks + KS, ...); the slices meet in workgroup memory, and slice 0 applies the
// cell (finish_units: the state buffer holds h and c of exactly the rows and unit the invocation owns,
// so no other invocation reads them) and publishes its h to the exchange. Rows come in NP passes of
// BMR = RG * TM.
//
// Loads of the next K tile are issued before the current one is multiplied (their waits land after
// it), so only the first tile of a pass waits for a round trip to L2. The grid (ceil(H / JT), 1, D)
// must be resident at once (record_rnn probes it: cooperative_probe.h); the exchange and its bounded
// waits are rnn_exchange.wgsl's.
//
// Rendered with the cell flags of rnn_step.wgsl (PHASE_FUSED only), G (= GATES_TOTAL <= 4), BT (= TM), TQ
// (= TM / 4), JT, RG, KS, K_SPLIT, BK, NP, NA (tile loads per invocation), HR (H rounded up to BK),
// WG_SIZE, ACC, ACTS, SPIN_LIMIT, UNIFORM_BINDING = 8. p.st.w: the exchange's first element in hx.
#include "rnn/rnn_cell.wgsl"
#include "rnn/rnn_exchange.wgsl"

const TM: u32 = BT;
const TQ: u32 = {{TQ}}u;  // TM / 4
const JT: u32 = {{JT}}u;
const RG: u32 = {{RG}}u;
const KS: u32 = {{KS}}u;
const BK: u32 = {{BK}}u;
const NP: u32 = {{NP}}u;
const HR: u32 = {{HR}}u;
const BMR: u32 = RG * TM;  // rows per pass
const BMP: u32 = BMR + 4u;  // padded: the tile stores of neighbouring k fall in different banks
const NT: u32 = JT * RG;
const WG: u32 = NT * KS;
const NA: u32 = {{NA}}u;  // ceil(BMR * BK / WG)

var<workgroup> rt: array<vec4<f32>, HR * JT>;        // [k][unit]: the unit's gates
var<workgroup> th: array<vec4<f32>, BK * BMP / 4u>;  // [k][row / 4]: one K tile of a pass's rows
#if K_SPLIT
var<workgroup> red: array<vec4<f32>, (KS - 1u) * TM * NT>;
#endif

// The exchange index (or, at step 0, the initial state's index) of element n of this invocation's
// share of K tile k0 of pass pp; `ok` false outside the rows and H.
struct TileEntry {
  index: u32,
  ok: bool,
}

fn tile_entry(step: u32, pp: u32, k0: u32, lidx: u32, n: u32, d: u32) -> TileEntry {
  let B = p.dims.z;
  let H = p.dims.w;
  let i = lidx + n * WG;
  let r = pp * BMR + i / BK;
  let k = k0 + i % BK;
  var e = TileEntry(0u, i < BMR * BK && r < B && k < H);
  if (step == 0u) {
    e.index = p.st.x + (d * B + r) * H + k;
  } else {
    e.index = exchange_index(step - 1u, d, r, k);
  }
  return e;
}

// Issues the loads of this invocation's share of a K tile (bits; 0 where not yet published).
fn issue_tile(step: u32, pp: u32, k0: u32, lidx: u32, d: u32, hv: ptr<function, array<u32, NA>>) {
  for (var n = 0u; n < NA; n++) {
    let e = tile_entry(step, pp, k0, lidx, n, d);
    var bits = 0x80000000u;  // -0.0: zero, and never waited for
    if (e.ok) {
      if (step == 0u) {
        bits = published(state[e.index]);
      } else {
        bits = atomicLoad(&hx[e.index]);
      }
    }
    (*hv)[n] = bits;
  }
}

// Waits for what had not been published when the loads were issued, and stores the tile.
fn land_tile(step: u32, pp: u32, k0: u32, lidx: u32, d: u32, hv: ptr<function, array<u32, NA>>) {
  for (var n = 0u; n < NA; n++) {
    var bits = (*hv)[n];
    if (bits == 0u) {
      bits = wait_bits(tile_entry(step, pp, k0, lidx, n, d).index);
    }
    let i = lidx + n * WG;
    if (i < BMR * BK) {
      let e = (i % BK) * BMP + i / BK;  // i = row BK + k
      th[e / 4u][e % 4u] = bitcast<f32>(bits);
    }
  }
}

@compute @workgroup_size({{WG_SIZE}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lidx: u32) {
  if (p.dims.x == PROBE) {
    probe_grid(lidx, groups);
    return;
  }
  let S = p.dims.y;
  let B = p.dims.z;
  let H = p.dims.w;
  let d = wg.z;
  let t = lidx % NT;
  let ks = lidx / NT;
  let u = t % JT;
  let rg = t / JT;
  let u0 = wg.x * JT;
  let j = u0 + u;

  // The workgroup's R^T, gates in the lanes of one vec4 per (k, unit); zero past H.
  let row_stride = GT * H;
  for (var i = lidx; i < HR * JT; i += WG) {
    let k = i / JT;
    let jj = u0 + i % JT;
    var v = vec4<f32>(0.0);
    if (k < H && jj < H) {
      let base = (d * H + k) * row_stride + p.wts.w + jj;
      for (var g = 0u; g < G; g++) {
        v[g] = weights[base + g * H];
      }
    }
    rt[i] = v;
  }

  let reverse = (p.misc.y & (F_REVERSE0 << d)) != 0u;
  var hv: array<u32, NA>;
  for (var step = 0u; step < S; step++) {
    let odd = (step & 1u) == 1u;
    let h_in = select(p.st.x, p.st.y, odd);
    let h_out = select(p.st.y, p.st.x, odd);
    let tt = select(step, S - 1u - step, reverse);
    for (var pp = 0u; pp < NP; pp++) {
      let b0 = pp * BMR + rg * TM;
      let finishes = ks == 0u && j < H && b0 < B;
      // The projections, loaded before the product so that their latency hides behind it.
      var xu: array<f32, GT * BT>;
      if (finishes) {
        for (var m = 0u; m < TM; m++) {
          if (b0 + m < B) {
            let xb = xw_index(tt, d, b0 + m, j);
            for (var g = 0u; g < GT; g++) {
              xu[g * TM + m] = xw[xb + g * H];
            }
          }
        }
      }
      // [row]: the unit's gates; indexed by constants only. Zeroed explicitly: lavapipe did not
      // re-initialise a var declared in a loop body on every iteration (2026-12-04).
      var acc: array<vec4<f32>, TM>;
#for m BT
      acc[{{m}}u] = vec4<f32>(0.0);
#endfor
      issue_tile(step, pp, 0u, lidx, d, &hv);
      for (var k0 = 0u; k0 < H; k0 += BK) {
        workgroupBarrier();  // the previous tile has been consumed
        land_tile(step, pp, k0, lidx, d, &hv);
        workgroupBarrier();
        if (k0 + BK < H) {
          issue_tile(step, pp, k0 + BK, lidx, d, &hv);  // in flight during the FMAs below
        }
        for (var kk = 0u; kk < BK / KS; kk++) {
          let k = kk * KS + ks;
          let b = rt[(k0 + k) * JT + u];
#for q TQ
          {
            let a = th[k * (BMP / 4u) + rg * TQ + {{q}}u];
#for i 4
            acc[4u * {{q}}u + {{i}}u] = fma(vec4<f32>(a[{{i}}]), b, acc[4u * {{q}}u + {{i}}u]);
#endfor
          }
#endfor
        }
      }
#if K_SPLIT
      workgroupBarrier();
      if (ks > 0u) {
#for m BT
        red[((ks - 1u) * TM + {{m}}u) * NT + t] = acc[{{m}}u];
#endfor
      }
      workgroupBarrier();
      if (ks == 0u) {
        for (var s = 0u; s + 1u < KS; s++) {
#for m BT
          acc[{{m}}u] += red[(s * TM + {{m}}u) * NT + t];
#endfor
        }
      }
#endif
      if (finishes) {
        var au: array<f32, {{ACC}}>;  // [gate][row]
#for m BT
#for g G
        au[{{g}}u * TM + {{m}}u] = acc[{{m}}u][{{g}}];
#endfor
#endfor
        finish_units(step, b0 / TM, d, j, h_in, h_out, &au, &xu);
        // The new h (the state holds it: this invocation wrote it) to the other workgroups.
        for (var m = 0u; m < TM; m++) {
          if (b0 + m < B) {
            atomicStore(&hx[exchange_index(step, d, b0 + m, j)], published(state[h_out + (d * B + b0 + m) * H + j]));
          }
        }
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
