// Shared by the conv kernels: the geometry (mirrors ConvUniforms in conv_uniforms.h) with 1-D and
// 2-D problems padded to 3 spatial dimensions by leading size-1 dimensions, and the index helpers.

struct ConvParams {
  in_size: vec4<u32>,    // xyz: spatial input size, w: C_in
  out_size: vec4<u32>,   // xyz: spatial output size, w: C_out
  kernel: vec4<u32>,     // xyz: kernel size, w: group
  stride: vec4<u32>,     // xyz: strides, w: batch
  dilation: vec4<u32>,   // xyz: dilations, w: invocations of this dispatch
  pad: vec4<i32>,        // xyz: pads at the beginning
  offsets: vec4<u32>,    // element offsets of x (or the column buffer), w, bias, y
  chunk: vec4<u32>,      // x: first batch, y: batches, z/w: flat input (or output) positions [begin, end)
  region: vec4<u32>,     // x/y: flat output positions [begin, end) written, z: column buffer width
  tap_step: vec4<u32>,   // xyz: s / gcd(s, d), the distance between taps that reach one output
  activation_alpha: f32, // leaky_relu's slope (gemm/activation.wgsl reads params.activation_alpha)
  x_base: u32,           // first flat element of X the X binding window starts at (im2col)
  first_row: u32,        // im2col: first column row written; scatter: first output channel
  y_base: u32,           // first flat element of Y the Y binding window starts at (scatter)
}

fn invocation(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wg.y * nwg.x + wg.x) * 256u + lid;
}

fn unflatten(p: u32, size: vec3<u32>) -> vec3<u32> {
  return vec3<u32>(p / (size.y * size.z), (p / size.z) % size.y, p % size.z);
}

fn flatten(i: vec3<u32>, size: vec3<u32>) -> u32 {
  return (i.x * size.y + i.y) * size.z + i.z;
}

// ConvTranspose: the input coordinate that output coordinate o reaches through tap k along one
// dimension, or -1 when it falls between strides or outside [0, in): o + pad - k * d = i * s.
fn transpose_source(o: u32, k: u32, d: u32) -> i32 {
  let t = i32(o) + params.pad[d] - i32(k * params.dilation[d]);
  let s = i32(params.stride[d]);
  if (t < 0 || t % s != 0 || t / s >= i32(params.in_size[d])) { return -1; }
  return t / s;
}

// ConvTranspose: the first tap k (< tap_step) through which output coordinate o has a source
// (o + pad - k * d divisible by s and >= 0), or the kernel size when it has none. The next ones
// are k + tap_step, k + 2 tap_step, ...: the loops visit only the taps that reach o.
fn first_tap(o: u32, d: u32) -> u32 {
  let s = i32(params.stride[d]);
  for (var k = 0u; k < params.tap_step[d] && k < params.kernel[d]; k = k + 1u) {
    let t = i32(o) + params.pad[d] - i32(k * params.dilation[d]);
    if (t < 0) { break; }
    if (t % s == 0) { return k; }
  }
  return params.kernel[d];
}

// Conv: the input coordinate that output coordinate o reads through tap k, or -1 in the padding.
fn conv_source(o: u32, k: u32, d: u32) -> i32 {
  let t = i32(o * params.stride[d] + k * params.dilation[d]) - params.pad[d];
  if (t < 0 || t >= i32(params.in_size[d])) { return -1; }
  return t;
}
