// Elementwise kernel: y = op(in0, in1, in2) with numpy broadcasting, 1..3 inputs.
// Each invocation produces 4 consecutive output elements: vec4 loads/stores where the layout
// allows (same-shape inputs at 16-byte alignment), scalar gathers through the broadcast strides
// otherwise. The per-input load functions come from elementwise/input.wgsl, rendered once per input.

struct Params {
  count: u32,                             // output elements
  rank: u32,                              // dims after coalescing, <= 8
  out_offset: u32,                        // in output elements
  _pad: u32,
  out_shape: array<vec4<u32>, 2>,         // dim d at [d / 4][d % 4]
  in_offset: vec4<u32>,                   // per input, in its elements
  in_strides: array<array<vec4<u32>, 2>, 3>,  // per input and dim; 0 = broadcast
  scalars: vec4<f32>,                     // op attributes: alpha, beta, gamma
}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

fn input_offset(which: u32) -> u32 { return params.in_offset[which]; }

{{INPUT_FUNCTIONS}}

@group(0) @binding({{OUT_BINDING}}) var<storage, read_write> out_buf: array<{{OUT_STORAGE}}>;

#include "elementwise/indexing.wgsl"

{{OP_FUNCTIONS}}

fn op(a: {{CT0}}, b: {{CT1}}, c: {{CT2}}) -> {{OUT_CT}} {
  return {{EXPR}};
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = ((wg.y * nwg.x + wg.x) * 256u + lid) * 4u;
  if (i >= params.count) { return; }
  let a = load4_in0(i);
#if ARITY2
  let b = load4_in1(i);
#else
  let b = vec4<{{CT1}}>();
#endif
#if ARITY3
  let c = load4_in2(i);
#else
  let c = vec4<{{CT2}}>();
#endif
  store4(i, vec4<{{OUT_CT}}>(op(a.x, b.x, c.x), op(a.y, b.y, c.y), op(a.z, b.z, c.z), op(a.w, b.w, c.w)));
}
