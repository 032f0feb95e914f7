// Determinant of each n x n matrix (n <= MAX_N): one invocation copies its matrix to private
// memory and eliminates with partial pivoting (the largest |pivot| of the column), the
// determinant being the product of the pivots with a sign flip per row swap. A zero column gives 0.
{{X_ACCESS}}
{{Y_ACCESS}}

struct DetParams {
  batch: u32,
  n: u32,
  x_offset: u32,
  y_offset: u32,
}
@group(0) @binding(2) var<uniform> params: DetParams;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let matrix = (wg.y * nwg.x + wg.x) * 64u + lid;
  if (matrix >= params.batch) { return; }
  let n = params.n;
  var a: array<f32, {{MAX_N}} * {{MAX_N}}>;
  let base = params.x_offset + matrix * n * n;
  for (var i = 0u; i < n * n; i = i + 1u) { a[i] = load_x(base + i); }
  var det = 1.0;
  for (var c = 0u; c < n; c = c + 1u) {
    var pivot = c;
    for (var r = c + 1u; r < n; r = r + 1u) {
      if (abs(a[r * n + c]) > abs(a[pivot * n + c])) { pivot = r; }
    }
    if (a[pivot * n + c] == 0.0) {
      det = 0.0;
      break;
    }
    if (pivot != c) {
      for (var k = 0u; k < n; k = k + 1u) {
        let t = a[c * n + k];
        a[c * n + k] = a[pivot * n + k];
        a[pivot * n + k] = t;
      }
      det = -det;
    }
    let p = a[c * n + c];
    det = det * p;
    for (var r = c + 1u; r < n; r = r + 1u) {
      let f = a[r * n + c] / p;
      for (var k = c + 1u; k < n; k = k + 1u) { a[r * n + k] = a[r * n + k] - f * a[c * n + k]; }
    }
  }
  store_y(params.y_offset + matrix, det);
}
