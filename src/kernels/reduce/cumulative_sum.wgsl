// Running sum of x viewed as [outer, L, inner] along L: one invocation per (outer, inner) column
// walks L (coalesced across neighbouring columns), from its end when REVERSE, writing the sum
// before (EXCLUSIVE) or after adding each element. Kahan-compensated f32 accumulation.
{{X_ACCESS}}
{{Y_ACCESS}}

struct ScanParams {
  outer: u32,
  length: u32,
  inner: u32,
  x_offset: u32,
  y_offset: u32,
}
@group(0) @binding(2) var<uniform> params: ScanParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let column = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (column >= params.outer * params.inner) { return; }
  let o = column / params.inner;
  let i = column % params.inner;
  let base = o * params.length * params.inner + i;
  var sum = 0.0;
  var compensation = 0.0;
  for (var step = 0u; step < params.length; step = step + 1u) {
#if REVERSE
    let k = params.length - 1u - step;
#else
    let k = step;
#endif
    let at = base + k * params.inner;
    let before = sum;
    let term = load_x(params.x_offset + at) - compensation;
    let next = sum + term;
    compensation = (next - sum) - term;
    sum = next;
#if EXCLUSIVE
    store_y(params.y_offset + at, before);
#else
    store_y(params.y_offset + at, sum);
#endif
  }
}
