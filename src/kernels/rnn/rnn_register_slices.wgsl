// What the register-resident recurrent kernels share (rnn_sequence_resident.wgsl, one workgroup per
// direction's R^T; rnn_sequence_cooperative.wgsl, R^T over many workgroups): invocation (unit, s) keeps
// its unit's G gate columns of R^T for K slice s (SL = 4 * KQ consecutive k) in G * KQ vec4 registers,
// and the rows' h sits in workgroup memory `hs` laid out [row][q][s] (vec4 q of slice s holds k = s * SL
// + 4q .. +3), so the NS slices of one q are consecutive vec4s and the reads of one instruction do not
// conflict. Module scope; needs H, KQ, SL, NS, UNITS (units per workgroup), GT, and the template values
// SUBGROUP_REDUCE and RED_SIZE. The function-body halves: rnn_register_weights.wgsl (the registers) and
// rnn_register_product.wgsl (a step's products and slice sums).
#if SUBGROUP_REDUCE
#else
var<workgroup> red: array<f32, {{RED_SIZE}}>;  // [gate][unit][slice] partial sums of one row
#endif

// Where entry k of a row of h lives in `hs` (vec4 index from the row's start, component k % 4).
fn h_slot(k: u32) -> u32 {
  return ((k % SL) / 4u) * NS + k / SL;
}

// R^T[k][column] of direction base w_base; zero past H (the padding of the last slice) and for units
// past H (unit_ok false).
fn r_entry(w_base: u32, k: u32, column: u32, unit_ok: bool) -> f32 {
  if (k < H && unit_ok) {
    return weights[w_base + k * GT * H + column];
  }
  return 0.0;
}

// The sum of v over the NS slices of this invocation's unit (its index within the workgroup), in
// every one of them.
fn slice_sum(v: f32, unit: u32, s: u32, g: u32) -> f32 {
#if SUBGROUP_REDUCE
  var total = v;
  for (var o = 1u; o < NS; o <<= 1u) {
    total += subgroupShuffleXor(total, o);
  }
  return total;
#else
  red[(g * UNITS + unit) * NS + s] = v;
  workgroupBarrier();
  var total = 0.0;
  for (var i = 0u; i < NS; i++) {
    total += red[(g * UNITS + unit) * NS + i];
  }
  workgroupBarrier();
  return total;
#endif
}

// The projections X W^T of unit j's gates for row b at step `step` of direction d.
fn projections(step: u32, d: u32, b: u32, j: u32) -> array<f32, GT> {
  let t = select(step, p.dims.y - 1u - step, has(F_REVERSE0 << d));
  let xb = xw_index(t, d, b, j);
  var xu: array<f32, GT>;
  for (var g = 0u; g < GT; g++) {
    xu[g] = xw[xb + g * H];
  }
  return xu;
}
