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
    case 8u: { return select(alpha * (exp(x) - 1.0), x, x >= 0.0); }
    case 9u: { return x / (1.0 + abs(x)); }
    case 10u: { return select(log(1.0 + exp(x)), x, x > 20.0); }
    default: { return x; }
  }
}
