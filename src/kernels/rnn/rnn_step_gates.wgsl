// The cell half of a GEMM step (StepKernel::gemm, rnn_kernel.h): the recurrent products of every
// direction, row and unit, H_prev R^T, were computed by the tiled GEMM core (gemm_tiled.wgsl) into
// `gates` [D, B, GT H] just before; one invocation per (direction, row, unit) applies the cell
// equations (finish_units, BT = 1) with its projections and writes the state and the outputs.
// For large batches (SCNet's band LSTMs: B = 433-864) the step product is a real GEMM that the
// fused step kernels, which also carry the cell in their epilogue, run far below the GEMM core's
// throughput. p.wts.w: the gates tensor's first element. Rendered with the cell flags of
// rnn_step.wgsl (fused phase), G = GT, BT = 1, ACC = G, ACTS, UNIFORM_BINDING = 8.
#include "rnn/rnn_cell.wgsl"
@group(0) @binding(7) var<storage, read> gates: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let step = p.dims.x;
  let S = p.dims.y;
  let B = p.dims.z;
  let H = p.dims.w;
  let idx = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (idx < p.misc.x * B * H) {
    let j = idx % H;
    let b = (idx / H) % B;
    let d = idx / (B * H);
    let tt = select(step, S - 1u - step, has(F_REVERSE0 << d));
    let xb = xw_index(tt, d, b, j);
    let gb = p.wts.w + (d * B + b) * GT * H + j;
    var acc: array<f32, {{ACC}}>;
    var xp: array<f32, GT>;
    for (var g = 0u; g < GT; g++) {
      acc[g] = gates[gb + g * H];
      xp[g] = xw[xb + g * H];
    }
    finish_units(step, b, d, j, p.st.x, p.st.y, &acc, &xp);
  }
  if (p.dims.x == 0xffffffffu) {
    // Never taken: keeps every binding in the automatic layout, which all variants share.
    store_y(0u, 0.0);
    store_yh(0u, 0.0);
    store_yc(0u, 0.0);
  }
}
