// The bindings both softmax kernels share (softmax_kernel.cpp fills the uniform): x at 0, y at 1
// (their accessors rendered as X_ACCESS, Y_ACCESS), the parameters at 2.
{{X_ACCESS}}
{{Y_ACCESS}}

struct SoftmaxParams {
  outer: u32,
  size: u32,    // K
  inner: u32,
  x_offset: u32,
  y_offset: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}
@group(0) @binding(2) var<uniform> params: SoftmaxParams;
