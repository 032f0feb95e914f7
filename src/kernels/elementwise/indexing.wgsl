// Broadcast indexing and the 4-wide output store shared by elementwise.wgsl and
// fused_elementwise.wgsl. The including shader declares `params` (rank, count, out_offset,
// out_shape, in_strides per input) and `out_buf`, and defines OUT_CT, OUT_VEC4 and OUT_F16.

// Element index of input `which` for output element `linear` under broadcasting.
fn broadcast_index(linear: u32, which: u32) -> u32 {
  var rest = linear;
  var index = 0u;
  for (var d = i32(params.rank) - 1; d >= 0; d = d - 1) {
    let size = params.out_shape[d / 4][d % 4];
    index = index + (rest % size) * params.in_strides[which][d / 4][d % 4];
    rest = rest / size;
  }
  return index;
}

fn store4(i: u32, v: vec4<{{OUT_CT}}>) {
#if OUT_VEC4
  out_buf[(params.out_offset + i) / 4u] = v;
#else
#if OUT_F16
  // Two halves per word; the output starts at an even element (Tensor views guarantee it).
  let w = (params.out_offset + i) / 2u;
  out_buf[w] = pack2x16float(v.xy);
  if (i + 2u < params.count) { out_buf[w + 1u] = pack2x16float(v.zw); }
#else
  for (var k = 0u; k < 4u; k = k + 1u) {
    if (i + k < params.count) { out_buf[params.out_offset + i + k] = v[k]; }
  }
#endif
#endif
}
