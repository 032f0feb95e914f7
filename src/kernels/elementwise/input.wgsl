// Binding and load function of one elementwise input, rendered once per input with
//   IN (in0/in1/in2), INDEX (0..2), BINDING, STORAGE (array element type), CT (compute type),
//   MODE_SAME / MODE_SCALAR / MODE_BROADCAST / MODE_ROWS (BroadcastMode), VEC4 (16-byte aligned vec4
//   storage), F16 (packed halves).
// The storage scalar type is the compute type (f32 for f32/f16, i32 for i32/i64, u32 for u8/bool).
// The including shader defines params.count, input_offset(k) and broadcast_index(linear, k).
@group(0) @binding({{BINDING}}) var<storage, read> {{IN}}_buf: array<{{STORAGE}}>;

fn load_{{IN}}(index: u32) -> {{CT}} {
#if F16
  return unpack2x16float({{IN}}_buf[index / 2u])[index % 2u];
#else
#if VEC4
  return {{IN}}_buf[index / 4u][index % 4u];
#else
  return {{IN}}_buf[index];
#endif
#endif
}

fn load4_{{IN}}(i: u32) -> vec4<{{CT}}> {
  let base = input_offset({{INDEX}}u);
#if MODE_SCALAR
  return vec4<{{CT}}>(load_{{IN}}(base));
#endif
#if MODE_SAME
#if VEC4
  return {{IN}}_buf[(base + i) / 4u];
#else
#if F16_PAIRS
  // Same shape, even offset: two whole words hold the four halves.
  let w = (base + i) / 2u;
  let last_word = (base + params.count - 1u) / 2u;
  return vec4<f32>(unpack2x16float({{IN}}_buf[w]), unpack2x16float({{IN}}_buf[min(w + 1u, last_word)]));
#else
  let last = params.count - 1u;
  return vec4<{{CT}}>(load_{{IN}}(base + min(i, last)), load_{{IN}}(base + min(i + 1u, last)),
                      load_{{IN}}(base + min(i + 2u, last)), load_{{IN}}(base + min(i + 3u, last)));
#endif
#endif
#endif
#if MODE_ROWS
  // i is a multiple of 4 and so is the innermost dim's extent (BroadcastMode::Rows): elements i .. i + 3
  // are neighbours from one index on (a multiple of 4 where VEC4: the outer strides are).
  let e = base + broadcast_index(i, {{INDEX}}u);
#if VEC4
  return {{IN}}_buf[e / 4u];
#else
  return vec4<{{CT}}>(load_{{IN}}(e), load_{{IN}}(e + 1u), load_{{IN}}(e + 2u), load_{{IN}}(e + 3u));
#endif
#endif
#if MODE_BROADCAST
  let last = params.count - 1u;
  return vec4<{{CT}}>(load_{{IN}}(base + broadcast_index(min(i, last), {{INDEX}}u)),
                      load_{{IN}}(base + broadcast_index(min(i + 1u, last), {{INDEX}}u)),
                      load_{{IN}}(base + broadcast_index(min(i + 2u, last), {{INDEX}}u)),
                      load_{{IN}}(base + broadcast_index(min(i + 3u, last), {{INDEX}}u)));
#endif
}
