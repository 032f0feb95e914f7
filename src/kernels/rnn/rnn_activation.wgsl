// The ONNX recurrent activation functions; a = (code, alpha, beta, -) with the codes of
// rnn_spec.h's Activation. Written to stay accurate and finite in float32 (no exp overflow).

fn rnn_tanh(x: f32) -> f32 {
  let ax = abs(x);
  if (ax < 0.0625) {
    let x2 = x * x;  // Taylor series: the exp form cancels for small |x|
    return x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 - x2 * (17.0 / 315.0))));
  }
  let e = exp(-2.0 * min(ax, 20.0));
  return sign(x) * (1.0 - e) / (1.0 + e);
}

fn rnn_sigmoid(x: f32) -> f32 {
  let e = exp(-abs(x));
  let s = 1.0 / (1.0 + e);
  return select(e * s, s, x >= 0.0);
}

// exp(x) - 1 without the cancellation near 0 (Elu of a small state: exp(x) - 1 in float32 has an
// absolute error of ~1e-7, a relative one of 1e-5 at x = 0.01): the series below |x| = 0.5 (its
// truncation error is under 1e-9 relative there).
fn rnn_expm1(x: f32) -> f32 {
  if (abs(x) < 0.5) {
    return x * (1.0 + x * (1.0 / 2.0 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x * (1.0 / 720.0 +
           x * (1.0 / 5040.0 + x * (1.0 / 40320.0 + x * (1.0 / 362880.0)))))))));
  }
  return exp(x) - 1.0;
}

// log(1 + e) accurate for small e (Softplus of a negative input): 1 + e rounds away most of e, and
// log(u) * e / (u - 1) corrects by the same rounding (Goldberg's log1p).
fn rnn_log1p(e: f32) -> f32 {
  let u = 1.0 + e;
  if (u == 1.0) {
    return e;
  }
  return log(u) * e / (u - 1.0);
}

fn rnn_activate(x: f32, a: vec4<f32>) -> f32 {
  let alpha = a.y;
  let beta = a.z;
  switch (u32(a.x)) {
    case 0u: { return rnn_sigmoid(x); }
    case 1u: { return rnn_tanh(x); }
    case 2u: { return max(x, 0.0); }
    case 3u: { return clamp(alpha * x + beta, 0.0, 1.0); }
    case 4u: { return alpha * x + beta; }
    case 5u: { return select(alpha * x, x, x >= 0.0); }
    case 6u: { return select(0.0, x, x > alpha); }
    case 7u: { return alpha * rnn_tanh(beta * x); }
    case 8u: { return select(alpha * rnn_expm1(min(x, 0.0)), x, x >= 0.0); }
    case 9u: { return x / (1.0 + abs(x)); }
    case 10u: { return select(rnn_log1p(exp(min(x, 20.0))), x, x > 20.0); }
    default: { return x; }
  }
}
