// h of every step traded between workgroups that run at the same time, through global memory: the
// cooperative kernel (rnn_sequence_cooperative.wgsl) and the persistent vec4 step
// (rnn_step_vec4.wgsl with PERSISTENT). The including shader defines EXCHANGE_ROW (entries of one row
// of h: the hidden size) and renders SPIN_LIMIT.
//
// hx[p.st.w + 1 + ((step * D + d) * B + b) * EXCHANGE_ROW + j] holds the bits of h of step `step`,
// written once with an atomic store; 0 means "not yet" (the buffer is cleared before the dispatch,
// and a computed +0.0 is stored as -0.0, the same value). So each value carries its own readiness and
// no ordering between different addresses is needed (WGSL's atomics are relaxed). A reader spins on
// the values with a bound: past it, or once another wait gave up (hx[p.st.w] != 0), the missing
// values read as NaN, so that a grid that was not resident after all yields NaN outputs (and the
// recorder's guard an error), never a hang.

@group(0) @binding(7) var<storage, read_write> hx: array<atomic<u32>>;

// p.dims.x in the probe dispatch (every real dispatch has step 0 there).
const PROBE: u32 = 0xfffffffeu;
// Spins of one wait before the grid is taken as not resident: on a GPU 2^21 (a step is a few
// microseconds, an atomic load about one), on a CPU adapter 2^26 (its loads take nanoseconds, and a
// thread of lavapipe's pool may wait out an OS time slice before it runs).
const SPIN_LIMIT: u32 = {{SPIN_LIMIT}}u;

fn exchange_index(step: u32, d: u32, b: u32, k: u32) -> u32 {
  return p.st.w + 1u + ((step * p.misc.x + d) * p.dims.z + b) * EXCHANGE_ROW + k;
}

// The h another workgroup stored at exchange index i, once it is there (NaN past the bound or once
// another wait gave up).
fn wait_h(i: u32) -> f32 {
  var bits = atomicLoad(&hx[i]);
  var spins = 0u;
  while (bits == 0u) {
    spins++;
    if ((spins & 255u) == 0u) {
      if (spins >= SPIN_LIMIT || atomicLoad(&hx[p.st.w]) != 0u) {
        atomicStore(&hx[p.st.w], 1u);
        bits = 0x7fc00000u;
        break;
      }
    }
    bits = atomicLoad(&hx[i]);
  }
  return bitcast<f32>(bits);
}

// The bits that publish h: never 0 (a +0.0 becomes -0.0).
fn published(h: f32) -> u32 {
  let bits = bitcast<u32>(h);
  return select(bits, 0x80000000u, bits == 0u);
}

// The probe dispatch (p.dims.x == PROBE): does the whole grid run at once? Every workgroup arrives,
// then waits (bounded by p.dims.y spins) for all of them; a workgroup that gives up sets hx[p.st.w],
// and the others stop waiting once they see it.
fn probe_residency(lidx: u32, groups: vec3<u32>) {
  if (lidx == 0u) {
    atomicAdd(&hx[p.st.w + 1u], 1u);
    let total = groups.x * groups.y * groups.z;
    var spins = 0u;
    while (atomicLoad(&hx[p.st.w + 1u]) < total && atomicLoad(&hx[p.st.w]) == 0u) {
      spins++;
      if (spins >= p.dims.y) {
        atomicStore(&hx[p.st.w], 1u);
      }
    }
  }
}
