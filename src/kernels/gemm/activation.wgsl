// The activation fused into GEMM stores, chosen by template (no runtime branch).
#if ACT_RELU
fn activate(x: f32) -> f32 { return max(x, 0.0); }
#endif
#if ACT_LEAKY_RELU
fn activate(x: f32) -> f32 { return select(params.activation_alpha * x, x, x >= 0.0); }
#endif
#if ACT_SIGMOID
// exp(-x) overflows to +inf for x < -88, giving 1 / inf = 0: the right limit.
fn activate(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }
#endif
#if ACT_TANH
// tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|): no overflow for large |x| (some backends
// evaluate the builtin as a ratio of exponentials and return NaN there).
fn activate(x: f32) -> f32 {
  let e = exp(-2.0 * abs(x));
  return sign(x) * (1.0 - e) / (1.0 + e);
}
#endif
#if ACT_GELU_ERF
// gelu(x) = x/2 (1 + erf(x / sqrt 2)). WGSL has no erf. For |z| < 0.5, a Taylor series of erf
// (error < 2e-8); else 1 + erf(z) = 2 - erfc(z) (z > 0) or erfc(|z|) (z < 0) with Numerical Recipes'
// Chebyshev fit erfcc (fractional error < 1.2e-7 everywhere), which keeps the small negative tail
// accurate instead of cancelling 1 - (1 - erfc).
fn one_plus_erf(z: f32) -> f32 {
  let a = abs(z);
  if (a < 0.5) {
    let z2 = z * z;
    // 2/sqrt(pi) (z - z^3/3 + z^5/10 - z^7/42 + z^9/216 - z^11/1320)
    return 1.0 + 1.1283791670955126 * z *
           (1.0 + z2 * (-0.3333333333 + z2 * (0.1 + z2 * (-0.0238095238 + z2 * (0.0046296296 - z2 * 0.000757575758)))));
  }
  let t = 1.0 / (1.0 + 0.5 * a);
  let erfc = t * exp(-a * a - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
             t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
             t * (-0.82215223 + t * 0.17087277)))))))));
  return select(erfc, 2.0 - erfc, z > 0.0);
}
fn activate(x: f32) -> f32 { return 0.5 * x * one_plus_erf(x * 0.7071067811865476); }
#endif
#if ACT_NONE
fn activate(x: f32) -> f32 { return x; }
#endif
