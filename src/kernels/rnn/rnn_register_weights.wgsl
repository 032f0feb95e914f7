  // This invocation's part of R^T, once for the whole sequence (named registers: an array indexed in
  // a loop the GPU compiler may not unroll would live in local memory). Needs w_base, k0 (= s * SL), j
  // (the unit), unit_ok.
#for g G
#for q KQ
  let r_{{g}}_{{q}} = vec4<f32>(r_entry(w_base, k0 + 4u * {{q}}u, {{g}}u * H + j, unit_ok),
                                r_entry(w_base, k0 + 4u * {{q}}u + 1u, {{g}}u * H + j, unit_ok),
                                r_entry(w_base, k0 + 4u * {{q}}u + 2u, {{g}}u * H + j, unit_ok),
                                r_entry(w_base, k0 + 4u * {{q}}u + 3u, {{g}}u * H + j, unit_ok));
#endfor
#endfor
