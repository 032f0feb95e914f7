    // A step's recurrent products of the BM rows in hs (from vec4 hbase on), summed over the slices
    // of the unit `sum_unit`: total_g holds row s's gate g. RU rows at a time: their products and
    // sums are independent chains that overlap; one vec4 of h per row live at a time (R^T already
    // holds G * KQ * 4 registers).
#for g G
    var total_{{g}} = 0.0;
#endfor
    for (var m0 = 0u; m0 < BM; m0 += RU) {
#for u RU
#for g G
      var a_{{u}}_{{g}} = 0.0;
#endfor
#endfor
#for q KQ
      {
#for u RU
        let h_{{u}} = hs[hbase + (m0 + {{u}}u) * HQ + s + {{q}}u * NS];
#for g G
        a_{{u}}_{{g}} += dot(r_{{g}}_{{q}}, h_{{u}});
#endfor
#endfor
      }
#endfor
#for u RU
#for g G
      a_{{u}}_{{g}} = slice_sum(a_{{u}}_{{g}}, sum_unit, s, {{g}}u);
      if (m0 + {{u}}u == s) {
        total_{{g}} = a_{{u}}_{{g}};
      }
#endfor
#endfor
    }
