// Float helpers for elementwise ops whose WGSL builtins are missing or not accurate enough for
// rel L2 <= 1e-6 against float64.

// erf: Abramowitz & Stegun 7.1.26 is only good to 1.5e-7 absolute and worse relative near 0, so:
// |x| < 0.5: Taylor series to x^13 (relative error < 1e-9); else erfc by Numerical Recipes'
// Chebyshev fit (fractional error < 1.2e-7).
fn erf_f32(x: f32) -> f32 {
  let z = abs(x);
  if (z < 0.5) {
    let t = x * x;
    // 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320 + x^13/9360)
    let p = 1.0 + t * (-1.0 / 3.0 + t * (1.0 / 10.0 + t * (-1.0 / 42.0 + t * (1.0 / 216.0 +
            t * (-1.0 / 1320.0 + t * (1.0 / 9360.0))))));
    return 1.1283791670955126 * x * p;
  }
  let t = 1.0 / (1.0 + 0.5 * z);
  let poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
             t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
             t * (-0.82215223 + t * 0.17087277))))))));
  let erfc = t * exp(poly);
  return select(erfc - 1.0, 1.0 - erfc, x >= 0.0);
}

// erfc without the cancellation of 1 - erf for large x (Gelu of negative inputs needs it).
fn erfc_f32(x: f32) -> f32 {
  let z = abs(x);
  if (z < 0.5) { return 1.0 - erf_f32(x); }
  let t = 1.0 / (1.0 + 0.5 * z);
  let poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
             t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
             t * (-0.82215223 + t * 0.17087277))))))));
  let r = t * exp(poly);
  return select(2.0 - r, r, x >= 0.0);
}

// exp(x) - 1 accurate near 0 (Kahan: (u - 1) * x / log(u) cancels the rounding of u).
fn expm1_f32(x: f32) -> f32 {
  if (abs(x) >= 0.5) { return exp(x) - 1.0; }
  let u = exp(x);
  if (u == 1.0) { return x; }
  return (u - 1.0) * x / log(u);
}

// tanh without overflow for large |x| and without cancellation near 0.
fn tanh_f32(x: f32) -> f32 {
  let z = abs(x);
  if (z < 0.125) {
    let t = x * x;
    return x * (1.0 + t * (-1.0 / 3.0 + t * (2.0 / 15.0 + t * (-17.0 / 315.0 + t * (62.0 / 2835.0)))));
  }
  let e = exp(-2.0 * min(z, 20.0));
  return sign(x) * (1.0 - e) / (1.0 + e);
}

fn sigmoid_f32(x: f32) -> f32 {
  // exp of a non-positive argument only: no overflow.
  let e = exp(-abs(x));
  return select(e / (1.0 + e), 1.0 / (1.0 + e), x >= 0.0);
}

// ONNX Pow: negative bases with integral exponents are defined (sign from the exponent's parity).
fn pow_f32(a: f32, b: f32) -> f32 {
  if (b == 2.0) { return a * a; }
  if (b == 1.0) { return a; }
  if (b == 0.0) { return 1.0; }
  if (b == 0.5) { return sqrt(a); }
  let r = exp2(b * log2(abs(a)));
  // NaN and infinity built from a runtime value: WGSL rejects them as constant expressions.
  let zero_bits = bitcast<u32>(a) & 0u;
  if (a < 0.0) {
    if (fract(b) != 0.0) { return bitcast<f32>(0x7fc00000u | zero_bits); }
    let odd = fract(b * 0.5) != 0.0;
    return select(r, -r, odd);
  }
  if (a == 0.0) { return select(0.0, bitcast<f32>(0x7f800000u | zero_bits), b < 0.0); }
  return r;
}

// Python-style integer modulo (ONNX Mod with fmod = 0): the result takes the divisor's sign.
fn mod_i32(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let r = a % b;
  return select(r, r + b, r != 0 && ((r < 0) != (b < 0)));
}

fn div_i32(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  return a / b;
}

fn is_nan_f32(x: f32) -> bool {
  let bits = bitcast<u32>(x);
  return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0u;
}

fn is_inf_f32(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u;
}

// atan: the builtin is off by ~4e-6 relative on some drivers. Cephes' atanf: reduce to
// |x| <= tan(pi/8) with atan(x) = pi/2 + atan(-1/x) or pi/4 + atan((x-1)/(x+1)), then a
// degree-9 odd polynomial (relative error ~1e-7).
fn atan_f32(v: f32) -> f32 {
  let x0 = abs(v);
  var offset = 0.0;
  var x = x0;
  if (x0 > 2.414213562373095) {
    offset = 1.5707963267948966;
    x = -1.0 / x0;
  } else if (x0 > 0.4142135623730950) {
    offset = 0.7853981633974483;
    x = (x0 - 1.0) / (x0 + 1.0);
  }
  let z = x * x;
  let p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * x + x;
  return sign(v) * (offset + p);
}

// sin/cos: GPU builtins lose accuracy away from 0 (1.6e-6 rel L2 on N(0, 2) inputs on an H200).
// Cephes' sinf/cosf: Cody-Waite reduction by pi/4 in three parts (exact products with fma),
// then minimax polynomials on [-pi/4, pi/4]. Accurate to ~1e-7 for |x| < 8192.
fn reduce_quarter_pi(x: f32, octant: ptr<function, i32>) -> f32 {
  var j = i32(abs(x) * 1.2732395447351628);  // 4/pi
  j = (j + 1) & ~1;
  let y = f32(j);
  var r = fma(-y, 0.78515625, abs(x));
  r = fma(-y, 2.4187564849853515625e-4, r);
  r = fma(-y, 3.77489497744594108e-8, r);
  *octant = j;
  return r;
}

fn sin_poly(r: f32) -> f32 {
  let z = r * r;
  return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
}

fn cos_poly(r: f32) -> f32 {
  let z = r * r;
  return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
}

fn sin_f32(x: f32) -> f32 {
  var j: i32;
  let r = reduce_quarter_pi(x, &j);
  let quadrant = (j >> 1) & 3;
  var s = select(sin_poly(r), cos_poly(r), (quadrant & 1) == 1);
  if (quadrant >= 2) { s = -s; }
  return select(s, -s, x < 0.0);
}

fn cos_f32(x: f32) -> f32 {
  var j: i32;
  let r = reduce_quarter_pi(x, &j);
  let quadrant = (j >> 1) & 3;
  var c = select(cos_poly(r), sin_poly(r), (quadrant & 1) == 1);
  if (quadrant == 1 || quadrant == 2) { c = -c; }
  return c;
}

// C fmod (ONNX Mod with fmod = 1): a - b * trunc(a / b), corrected when the rounded quotient lands
// on the wrong side of an integer.
fn fmod_f32(a: f32, b: f32) -> f32 {
  // fma: a - b*q in one rounding, which is exact for fmod's result; a separately rounded b*q could
  // leave r a hair below 0 where the true remainder is 0, and the fix-up below would then add b.
  var r = fma(-b, trunc(a / b), a);
  if (r != 0.0 && (r < 0.0) != (a < 0.0)) { r = r + select(abs(b), -abs(b), a < 0.0); }
  if (abs(r) >= abs(b)) { r = r - select(abs(b), -abs(b), a < 0.0); }
  return r;
}

// Integer power by squaring (ONNX Pow on int32/int64); negative exponents give 0 except for |a| == 1.
fn pow_i32(a: i32, b: i32) -> i32 {
  if (b < 0) { return select(0, select(1, select(1, -1, (b & 1) == 1), a == -1), a == 1 || a == -1); }
  var result = 1;
  var base = a;
  var e = b;
  while (e > 0) {
    if ((e & 1) == 1) { result = result * base; }
    base = base * base;
    e = e >> 1;
  }
  return result;
}

// log(1 + x) accurate near 0 (Kahan: the rounding of u = 1 + x cancels in log(u) * x / (u - 1)).
fn log1p_f32(x: f32) -> f32 {
  let u = 1.0 + x;
  if (u == 1.0) { return x; }
  return log(u) * x / (u - 1.0);
}

// asin(x) = atan(x / sqrt(1 - x^2)), with 1 - x^2 as (1 - x)(1 + x) (no cancellation near |x| = 1).
fn asin_f32(x: f32) -> f32 {
  if (abs(x) == 1.0) { return x * 1.5707963267948966; }
  return atan_f32(x / sqrt((1.0 - x) * (1.0 + x)));
}

// acos(x) = 2 atan(sqrt((1 - x) / (1 + x))): accurate relative to the small results near x = 1.
fn acos_f32(x: f32) -> f32 {
  if (x == -1.0) { return 3.141592653589793; }
  return 2.0 * atan_f32(sqrt((1.0 - x) / (1.0 + x)));
}

// sinh from expm1 (no cancellation near 0): with e = expm1(|x|), sinh|x| = (e + e / (e + 1)) / 2.
fn sinh_f32(x: f32) -> f32 {
  let e = expm1_f32(abs(x));
  return sign(x) * 0.5 * (e + e / (e + 1.0));
}

fn cosh_f32(x: f32) -> f32 {
  let e = exp(abs(x));
  return 0.5 * (e + 1.0 / e);
}

// asinh|x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); log(2|x|) where x^2 would overflow.
fn asinh_f32(x: f32) -> f32 {
  let z = abs(x);
  if (z > 1e18) { return sign(x) * (log(z) + 0.6931471805599453); }
  return sign(x) * log1p_f32(z + z * z / (1.0 + sqrt(1.0 + z * z)));
}

// acosh(x) = log1p((x - 1) + sqrt((x - 1)(x + 1))), accurate near x = 1.
fn acosh_f32(x: f32) -> f32 {
  if (x > 1e18) { return log(x) + 0.6931471805599453; }
  let t = x - 1.0;
  return log1p_f32(t + sqrt(t * (x + 1.0)));
}

// atanh(x) = sign(x) log1p(2|x| / (1 - |x|)) / 2: odd, so the log1p argument stays >= 0 (for x near -1
// it would sit near -1, where the quotient's rounding is amplified by 1 / (1 + u)).
fn atanh_f32(x: f32) -> f32 {
  let z = abs(x);
  return sign(x) * 0.5 * log1p_f32(2.0 * z / (1.0 - z));
}
