// Shared by the normalization kernels: parameters, affine indexing and the Chan merge of
// (count, mean, M2) statistics.

struct NormParams {
  rows: u32,
  row_size: u32,
  chunk_size: u32,     // elements of a row per workgroup in the partial-stats pass
  chunks: u32,         // ceil(row_size / chunk_size), at most 256 (one per invocation of a merge)
  x_offset: u32,
  y_offset: u32,
  scale_offset: u32,
  bias_offset: u32,
  // Affine parameter of element (r, k): (r % row_mod) * row_mul + (k / k_div) % k_mod.
  row_mod: u32,
  row_mul: u32,
  k_div: u32,
  k_mod: u32,
  epsilon: f32,
  slope_offset: u32,
  blocks: u32,         // workgroups per row in the apply pass
  _pad: u32,
}

// The affine parameter index of elements k, k + stride, k + 2 stride, ... of row r. GPUs divide
// integers in software (tens of instructions), so the divisions are done once per invocation
// (affine_walk) and the index is stepped after that (affine_step); the plan also names the two common
// forms, AFFINE_ROW (k_mod == 1: InstanceNorm, per-group GroupNorm) and AFFINE_K (row_mul == 0,
// k_div == 1, k_mod >= row_size: LayerNorm), whose index needs no walk at all (affine_at; the
// compiler drops the unused walk).
struct AffineWalk {
  row_part: u32,  // (r % row_mod) * row_mul
  channel: u32,   // (k / k_div) % k_mod
  within: u32,    // k % k_div
}

fn affine_walk(r: u32, k: u32) -> AffineWalk {
  let q = k / params.k_div;
  return AffineWalk((r % params.row_mod) * params.row_mul, q % params.k_mod, k - q * params.k_div);
}

// The walk moved on by `stride` to element k of row r: one carry at most while stride < k_div, else
// found again by division.
fn affine_step(w: AffineWalk, stride: u32, r: u32, k: u32) -> AffineWalk {
  if (stride >= params.k_div) { return affine_walk(r, k); }
  var next = w;
  next.within = w.within + stride;
  if (next.within >= params.k_div) {
    next.within = next.within - params.k_div;
    next.channel = next.channel + 1u;
    if (next.channel == params.k_mod) { next.channel = 0u; }
  }
  return next;
}

// Element (r, k)'s index, `w` its walk.
fn affine_at(w: AffineWalk, r: u32, k: u32) -> u32 {
#if AFFINE_ROW
  return (r % params.row_mod) * params.row_mul;
#else
#if AFFINE_K
  return k;
#else
  return w.row_part + w.channel;
#endif
#endif
}

// Statistics of a set: x = count, y = mean, z = M2 (sum of squared deviations).
fn merge_stats(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
  let n = a.x + b.x;
  if (n == 0.0) { return vec4<f32>(0.0); }
  let delta = b.y - a.y;
  let fb = b.x / n;
  return vec4<f32>(n, a.y + delta * fb, a.z + b.z + delta * delta * a.x * fb, 0.0);
}

var<workgroup> shared_stats: array<vec4<f32>, 256>;

// Tree merge of one vec4 statistic per invocation (256 invocations); result in shared_stats[0].
fn workgroup_merge(lid: u32, mine: vec4<f32>) {
  shared_stats[lid] = mine;
  workgroupBarrier();
  for (var stride = 128u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { shared_stats[lid] = merge_stats(shared_stats[lid], shared_stats[lid + stride]); }
    workgroupBarrier();
  }
}
