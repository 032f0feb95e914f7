// Fused elementwise kernel: one output element from up to 7 inputs (numpy broadcasting) through a
// group of catalog ops evaluated in registers (kernels/elementwise/fused_elementwise.h), so a chain
// such as an exported GELU (Div, Erf, Add, Mul, Mul) reads its inputs and writes its output once
// instead of once per op. Loads and stores as elementwise.wgsl: each invocation produces 4
// consecutive output elements, vec4 accesses where the layout allows. Generated from the problem:
// the input load functions (elementwise/input.wgsl, one per input), STEP_FUNCTIONS (one function
// per distinct op and type, its body the catalog's expression) and the body of `fused` (one `let`
// per step). Scalar constants and op attributes are uniform words, so groups differing only in
// constants share one pipeline.

struct Params {
  count: u32,                                          // output elements
  rank: u32,                                           // dims after coalescing, <= 8
  out_offset: u32,                                     // in output elements
  _pad: u32,
  out_shape: array<vec4<u32>, 2>,                      // dim d at [d / 4][d % 4]
  in_offset: array<vec4<u32>, {{OFFSET_VEC4S}}>,       // input k at [k / 4][k % 4], in its elements
  in_strides: array<array<vec4<u32>, 2>, {{INPUTS}}>,  // per input and dim; 0 = broadcast
  constants: array<vec4<u32>, {{CONSTANT_VEC4S}}>,     // constant k's bits at [k / 4][k % 4]
}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

fn input_offset(which: u32) -> u32 { return params.in_offset[which / 4u][which % 4u]; }

fn constant_bits(k: u32) -> u32 { return params.constants[k / 4u][k % 4u]; }

// An op's attributes (alpha, beta, gamma) from constants k..k+2, as the catalog's params.scalars.
fn attributes_at(k: u32) -> vec4<f32> {
  return vec4<f32>(bitcast<f32>(constant_bits(k)), bitcast<f32>(constant_bits(k + 1u)),
                   bitcast<f32>(constant_bits(k + 2u)), 0.0);
}

{{INPUT_FUNCTIONS}}

@group(0) @binding({{OUT_BINDING}}) var<storage, read_write> out_buf: array<{{OUT_STORAGE}}>;

#include "elementwise/indexing.wgsl"

{{OP_FUNCTIONS}}

{{STEP_FUNCTIONS}}

fn fused({{FUSED_PARAMETERS}}) -> {{OUT_CT}} {
{{FUSED_BODY}}
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = ((wg.y * nwg.x + wg.x) * 256u + lid) * 4u;
  if (i >= params.count) { return; }
{{LOADS}}
  store4(i, vec4<{{OUT_CT}}>(fused({{LANE_X}}), fused({{LANE_Y}}), fused({{LANE_Z}}), fused({{LANE_W}})));
}
