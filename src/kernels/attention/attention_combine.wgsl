// Merges the key slices of a split attention (attention.wgsl with SPLIT): for each query row,
// out = sum_s w_s acc_s / sum_s w_s l_s with w_s = exp(m_s - max_s m_s), the online softmax's merge
// of partial (max, sum, accumulator) triples. One invocation per output element, written where the
// output operand puts element (b, i, d) (attention_common.wgsl's strides).
{{P_ACCESS}}
{{O_ACCESS}}

struct CombineParams {
  rows: u32,    // batch x Lq of this dispatch
  splits: u32,
  p_offset: u32,
  o_offset: u32,
  lq: u32,
  o_batch: u32,
  o_row: u32,
  o_col: u32,
}
@group(0) @binding(2) var<uniform> params: CombineParams;

const DV: u32 = {{DV}}u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let index = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (index >= params.rows * DV) { return; }
  let row = index / DV;
  let stride = params.rows * (DV + 2u);  // between slices
  let first = params.p_offset + row * (DV + 2u);
  var m = -0x1.fffffep+127;
  for (var s = 0u; s < params.splits; s = s + 1u) { m = max(m, load_p(first + s * stride + DV)); }
  var l = 0.0;
  var acc = 0.0;
  for (var s = 0u; s < params.splits; s = s + 1u) {
    let base = first + s * stride;
    let w = exp(load_p(base + DV) - m);
    l = l + w * load_p(base + DV + 1u);
    acc = acc + w * load_p(base + index % DV);
  }
  let b = row / params.lq;
  store_o(params.o_offset + b * params.o_batch + (row - b * params.lq) * params.o_row + (index % DV) * params.o_col,
          acc / l);
}
