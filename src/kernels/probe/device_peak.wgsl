// The device peak probe's kernels (kernels/probe/device_peak.h).
//
// fma_rate: each invocation runs `iterations` rounds of 32 independent vec4 FMAs (8 chains, unrolled
// 4 deep: enough independent work to hide the FMA latency on any GPU) on values that depend on the
// invocation and a uniform, so no compiler can fold the loop, and stores their sum so none is dead.
// 256 FLOPs per round (an FMA counts two).
//
// dependent_step: one invocation that increments one word. A chain of these dispatches, each
// reading what the one before wrote, runs one after the other: the chain's time per dispatch is
// the latency floor of one dependent step (what a recurrent layer pays per time step at least).

struct Params {
  iterations: u32,
  multiplier: f32,
  addend: f32,
  pad: u32,
}

@group(0) @binding(0) var<storage, read_write> sink: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(256)
fn fma_rate(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = gid.x + gid.y * groups.x * 256u;
  let start = f32(index & 1023u) * 1e-4;
  let m = vec4<f32>(params.multiplier);
  let c = vec4<f32>(params.addend);
  var a0 = vec4<f32>(start, start + 0.1, start + 0.2, start + 0.3);
  var a1 = a0 + 0.01;
  var a2 = a0 + 0.02;
  var a3 = a0 + 0.03;
  var a4 = a0 + 0.04;
  var a5 = a0 + 0.05;
  var a6 = a0 + 0.06;
  var a7 = a0 + 0.07;
  for (var k = 0u; k < params.iterations; k++) {
    for (var u = 0u; u < 4u; u++) {
      a0 = fma(a0, m, c);
      a1 = fma(a1, m, c);
      a2 = fma(a2, m, c);
      a3 = fma(a3, m, c);
      a4 = fma(a4, m, c);
      a5 = fma(a5, m, c);
      a6 = fma(a6, m, c);
      a7 = fma(a7, m, c);
    }
  }
  let total = (a0 + a1) + (a2 + a3) + (a4 + a5) + (a6 + a7);
  if (index < arrayLength(&sink)) {
    sink[index] = total.x + total.y + total.z + total.w;
  }
}

@compute @workgroup_size(1)
fn dependent_step() {
  sink[0] = sink[0] + 1.0;
}
