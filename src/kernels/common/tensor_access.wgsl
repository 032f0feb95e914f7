// Binding and scalar accessors of one float tensor, rendered once per tensor with
//   NAME, BINDING, WRITABLE (read_write and store_NAME), F16 (packed halves).
// load_NAME(i) returns f32; store_NAME(i, v) writes one element. A float16 element shares its 32-bit
// word with a neighbour that another invocation may write at the same time, so f16 stores are two
// atomic bit operations on the word (each touches only its own half: no lost update).
#if F16
#if WRITABLE
@group(0) @binding({{BINDING}}) var<storage, read_write> {{NAME}}_buf: array<atomic<u32>>;

fn load_{{NAME}}(i: u32) -> f32 {
  return unpack2x16float(atomicLoad(&{{NAME}}_buf[i / 2u]))[i % 2u];
}

fn store_{{NAME}}(i: u32, v: f32) {
  let shift = (i % 2u) * 16u;
  let bits = (pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu) << shift;
  atomicAnd(&{{NAME}}_buf[i / 2u], ~(0xffffu << shift));
  atomicOr(&{{NAME}}_buf[i / 2u], bits);
}
#else
@group(0) @binding({{BINDING}}) var<storage, read> {{NAME}}_buf: array<u32>;

fn load_{{NAME}}(i: u32) -> f32 {
  return unpack2x16float({{NAME}}_buf[i / 2u])[i % 2u];
}
#endif
#else
#if WRITABLE
@group(0) @binding({{BINDING}}) var<storage, read_write> {{NAME}}_buf: array<f32>;

fn store_{{NAME}}(i: u32, v: f32) {
  {{NAME}}_buf[i] = v;
}
#else
@group(0) @binding({{BINDING}}) var<storage, read> {{NAME}}_buf: array<f32>;
#endif

fn load_{{NAME}}(i: u32) -> f32 {
  return {{NAME}}_buf[i];
}
#endif
