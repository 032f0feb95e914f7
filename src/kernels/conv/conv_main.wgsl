// The conv kernels' entry point up to their element index: 256 invocations a workgroup over a 2-D
// grid of workgroups (invocation(), conv_common.wgsl), and the invocations past this dispatch's
// count (params.dilation.w) return. The shader that includes it goes on with the body from `idx`
// and closes it.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let idx = invocation(wg, nwg, lid);
  if (idx >= params.dilation.w) { return; }
