// Shared pieces of the GEMM shaders: uniforms, batch offsets, operand access by storage type,
// the fused epilogue and the output store.
//
// Template values: A_F16 B_F16 OUT_F16 ADDEND_F16 (packed halves, 2 per u32), A_VEC B_VEC (the
// operand's contiguous dimension, row stride and offset are multiples of 4: one 16-byte (f32) or
// 8-byte (f16) load per 4 elements), OUT_MODE (f32 | f16_pairs | f16_atomic; OUT_VEC4 with f32: vec4
// stores, tiled only), OUT_PERMUTED (out_elem), HAS_ADDEND, HAS_RESIDUAL (the program's second input, a tensor of the
// output's shape at RESIDUAL_BINDING; RESIDUAL_F16),
// ACTIVATION (none | relu | leaky_relu | sigmoid | tanh | gelu_erf), PARAMS_BINDING.

struct Params {
  batch_shape: vec4<u32>,        // collapsed batch dims, innermost last; unused = 1
  a_batch_stride: vec4<u32>,     // elements; 0 = broadcast
  b_batch_stride: vec4<u32>,
  d_batch_stride: vec4<u32>,     // addend
  M: u32, N: u32, K: u32, batch_base: u32,
  a_offset: u32, a_ld: u32, b_offset: u32, b_ld: u32,
  c_offset: u32, d_offset: u32, d_row_stride: u32, d_col_stride: u32,
  alpha: f32, beta: f32, activation_alpha: f32,
  b_k_limit: u32,                // K extent of B's rows when K-contiguous: K, or K_pad when prepacked (zero padding)
  k_step_runtime: u32,           // the tiled K step as a uniform, for KEEP_K_LOOP (see gemm_tiled.wgsl)
  r_offset: u32,                 // the residual's element 0 (HAS_RESIDUAL)
  part_stride: u32,              // COLUMN_PARTS: elements from one part of the output to the next
  perm_col_stride2: u32,         // OUT_PERMUTED (GemmProblem::output_permutation): col_stride[1]
  perm_radix: vec4<u32>,         // row_radix[0], row_radix[1], col_radix[0], col_radix[1]
  perm_stride: vec4<u32>,        // row_stride[0..2], col_stride[0]
}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

// ---- operands --------------------------------------------------------------------------------
#if A_VEC
#if A_F16
@group(0) @binding(0) var<storage, read> a_data: array<vec2<u32>>;
fn a_vec4(i: u32) -> vec4<f32> { let w = a_data[i]; return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)); }
#else
@group(0) @binding(0) var<storage, read> a_data: array<vec4<f32>>;
fn a_vec4(i: u32) -> vec4<f32> { return a_data[i]; }
#endif
#else
#if A_F16
@group(0) @binding(0) var<storage, read> a_data: array<u32>;
fn a_elem(e: u32) -> f32 { return unpack2x16float(a_data[e >> 1u])[e & 1u]; }
#else
@group(0) @binding(0) var<storage, read> a_data: array<f32>;
fn a_elem(e: u32) -> f32 { return a_data[e]; }
#endif
#endif

#if B_VEC
#if B_F16
@group(0) @binding(1) var<storage, read> b_data: array<vec2<u32>>;
fn b_vec4(i: u32) -> vec4<f32> { let w = b_data[i]; return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)); }
#else
@group(0) @binding(1) var<storage, read> b_data: array<vec4<f32>>;
fn b_vec4(i: u32) -> vec4<f32> { return b_data[i]; }
#endif
#else
#if B_F16
@group(0) @binding(1) var<storage, read> b_data: array<u32>;
fn b_elem(e: u32) -> f32 { return unpack2x16float(b_data[e >> 1u])[e & 1u]; }
#else
@group(0) @binding(1) var<storage, read> b_data: array<f32>;
fn b_elem(e: u32) -> f32 { return b_data[e]; }
#endif
#endif

// Elements (r, c .. c+3) of a stored rows x cols matrix (row stride ld) starting at element `base`;
// zero outside the matrix. Indices are clamped instead of branched on, so the loads never leave the
// matrix and the caller's loop has no bounds branches. rows, cols >= 1.
fn load_a_unit(base: u32, r: u32, c: u32, rows: u32, cols: u32) -> vec4<f32> {
  let rr = min(r, rows - 1u);
#if A_VEC
  // cols % 4 == 0, so a group of four is wholly inside or wholly outside.
  let v = a_vec4((base + rr * params.a_ld + min(c, cols - 4u)) >> 2u);
  return select(vec4<f32>(0.0), v, r < rows && c < cols);
#else
  var v: vec4<f32>;
  for (var i = 0u; i < 4u; i++) {
    let cc = c + i;
    v[i] = select(0.0, a_elem(base + rr * params.a_ld + min(cc, cols - 1u)), r < rows && cc < cols);
  }
  return v;
#endif
}

fn load_b_unit(base: u32, r: u32, c: u32, rows: u32, cols: u32) -> vec4<f32> {
  let rr = min(r, rows - 1u);
#if B_VEC
  let v = b_vec4((base + rr * params.b_ld + min(c, cols - 4u)) >> 2u);
  return select(vec4<f32>(0.0), v, r < rows && c < cols);
#else
  var v: vec4<f32>;
  for (var i = 0u; i < 4u; i++) {
    let cc = c + i;
    v[i] = select(0.0, b_elem(base + rr * params.b_ld + min(cc, cols - 1u)), r < rows && cc < cols);
  }
  return v;
#endif
}

// ---- batch -------------------------------------------------------------------------------------
struct BatchBase { a: u32, b: u32, c: u32, d: u32 }

// The output's row length: N, or with COLUMN_PARTS (the output stored as consecutive parts of PART_N
// columns, GemmProblem::column_parts) one part's.
fn c_row_length() -> u32 {
#if COLUMN_PARTS
  return {{PART_N}}u;
#else
  return params.N;
#endif
}

// Element of output (m, n) of the batch entry starting at `c_base`.
fn out_elem(c_base: u32, m: u32, n: u32) -> u32 {
#if OUT_PERMUTED
  // The row over all batch entries (c_base is c_offset + batch M N), then both indices' digits.
  let r = (c_base - params.c_offset) / params.N + m;
  let rq = r / params.perm_radix.x;
  let nq = n / params.perm_radix.z;
  return params.c_offset + (r % params.perm_radix.x) * params.perm_stride.x +
         (rq % params.perm_radix.y) * params.perm_stride.y + (rq / params.perm_radix.y) * params.perm_stride.z +
         n % params.perm_radix.z + (nq % params.perm_radix.w) * params.perm_stride.w +
         (nq / params.perm_radix.w) * params.perm_col_stride2;
#else
#if COLUMN_PARTS
  let part = n / {{PART_N}}u;
  return c_base + part * params.part_stride + m * {{PART_N}}u + (n - part * {{PART_N}}u);
#else
  return c_base + m * params.N + n;
#endif
#endif
}

// Element offsets of one batch entry in every operand (numpy broadcasting through 0 strides).
fn batch_base(batch: u32) -> BatchBase {
  var rest = batch;
  var o = BatchBase(params.a_offset, params.b_offset, params.c_offset + batch * params.M * c_row_length(), params.d_offset);
  for (var d = 3; d >= 0; d--) {
    let i = rest % params.batch_shape[d];
    rest = rest / params.batch_shape[d];
    o.a += i * params.a_batch_stride[d];
    o.b += i * params.b_batch_stride[d];
    o.d += i * params.d_batch_stride[d];
  }
  return o;
}

// ---- epilogue ----------------------------------------------------------------------------------
#if HAS_ADDEND
#if ADDEND_F16
@group(0) @binding(3) var<storage, read> d_data: array<u32>;
fn d_elem(e: u32) -> f32 { return unpack2x16float(d_data[e >> 1u])[e & 1u]; }
#else
@group(0) @binding(3) var<storage, read> d_data: array<f32>;
fn d_elem(e: u32) -> f32 { return d_data[e]; }
#endif
#endif

#if HAS_RESIDUAL
#if RESIDUAL_F16
@group(0) @binding({{RESIDUAL_BINDING}}) var<storage, read> r_data: array<u32>;
fn r_elem(e: u32) -> f32 { return unpack2x16float(r_data[e >> 1u])[e & 1u]; }
#else
@group(0) @binding({{RESIDUAL_BINDING}}) var<storage, read> r_data: array<f32>;
fn r_elem(e: u32) -> f32 { return r_data[e]; }
#endif
#endif

#include "gemm/activation.wgsl"

// The fused elementwise steps after the activation (GemmEpilogue::program; the identity if none).
{{PROGRAM}}

// alpha * acc + beta * addend, then the activation and the program: fused into the store of output
// element `e` (the residual, laid out as the output, is read at the same place).
fn epilogue(acc: f32, d_base: u32, m: u32, n: u32, e: u32) -> f32 {
  var v = params.alpha * acc;
#if HAS_ADDEND
  v += params.beta * d_elem(d_base + m * params.d_row_stride + n * params.d_col_stride);
#endif
#if HAS_RESIDUAL
  return program(activate(v), r_elem(e - params.c_offset + params.r_offset));
#else
  return program(activate(v));
#endif
}

// ---- output --------------------------------------------------------------------------------------
#if OUT_F32
#if OUT_VEC4
// The tiled shader's 16-byte stores (N and the output offset are multiples of 4; e is one too).
@group(0) @binding(2) var<storage, read_write> c_data: array<vec4<f32>>;
fn store_four(e: u32, v: vec4<f32>) { c_data[e >> 2u] = v; }
#else
@group(0) @binding(2) var<storage, read_write> c_data: array<f32>;
fn store_one(e: u32, v: f32) { c_data[e] = v; }
#endif
#endif
#if OUT_F16_PAIRS
// N and the output offset are even: a thread owns whole words (two neighbouring columns).
@group(0) @binding(2) var<storage, read_write> c_data: array<u32>;
fn store_pair(e: u32, v: vec2<f32>) { c_data[e >> 1u] = pack2x16float(v); }
#endif
#if OUT_F16_ATOMIC
// Neighbouring halves of one word may belong to different threads: replace our half atomically.
@group(0) @binding(2) var<storage, read_write> c_data: array<atomic<u32>>;
fn store_one(e: u32, v: f32) {
  let shift = (e & 1u) * 16u;
  let bits = (pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu) << shift;
  atomicAnd(&c_data[e >> 1u], ~(0xffffu << shift));
  atomicOr(&c_data[e >> 1u], bits);
}
#endif
