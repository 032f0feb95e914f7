// The WGSL template step: conditionals, substitution, includes and its error messages.
#include <gtest/gtest.h>

#include <stdexcept>

#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

TEST(ShaderTemplate, ConditionalsAndSubstitution) {
  const char* text =
      "a {{X}}\n"
      "#if ON\nkept\n#else\ndropped\n#endif\n"
      "#if OFF\ndropped\n#else\nelse-kept\n#endif\n"
      "#ifdef OFF\ndefined\n#endif\n"
      "#ifndef MISSING\nnot-defined\n#endif\n"
      "#if ON\n#if OFF\nnested-dropped\n#endif\nnested-kept\n#endif\n";
  std::string out = render_template_text(text, {{"X", "42"}, {"ON", "1"}, {"OFF", "0"}}, "t");
  EXPECT_EQ(out, "a 42\nkept\nelse-kept\ndefined\nnot-defined\nnested-kept\n\n");
}

TEST(ShaderTemplate, ErrorsNameTheShaderAndLine) {
  try {
    render_template_text("ok\n{{NOPE}}\n", {}, "my.wgsl");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("my.wgsl:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("NOPE"), std::string::npos) << e.what();
  }
  EXPECT_THROW(render_template_text("#if A\nx\n", {}, "t"), std::runtime_error);
  EXPECT_THROW(render_template_text("#endif\n", {}, "t"), std::runtime_error);
  EXPECT_THROW(render_template_text("#else\n", {}, "t"), std::runtime_error);
  EXPECT_THROW(shader_text("no/such.wgsl"), std::runtime_error);
}

TEST(ShaderTemplate, ForRepeatsItsBodyWithTheIndexBound) {
  const char* text =
      "#for g N\n"
      "#for q 2\n"
      "r{{g}}{{q}} {{X}}\n"
      "#endfor\n"
      "#if ON\nsum{{g}}\n#endif\n"
      "#endfor\n"
      "#for z 0\nnever\n#endfor\n"
      "#if OFF\n#for q 3\ndropped\n#endfor\n#endif\n"
      "end {{X}}\n";
  std::string out = render_template_text(text, {{"N", "3"}, {"X", "x"}, {"ON", "1"}, {"OFF", "0"}}, "t");
  EXPECT_EQ(out, "r00 x\nr01 x\nsum0\nr10 x\nr11 x\nsum1\nr20 x\nr21 x\nsum2\nend x\n\n");
  EXPECT_THROW(render_template_text("#for i 2\nx\n", {}, "t"), std::runtime_error);      // no #endfor
  EXPECT_THROW(render_template_text("#endfor\n", {}, "t"), std::runtime_error);           // no #for
  EXPECT_THROW(render_template_text("#for i\nx\n#endfor\n", {}, "t"), std::runtime_error);  // no count
  EXPECT_THROW(render_template_text("#for i Q\nx\n#endfor\n", {{"Q", "two"}}, "t"), std::runtime_error);
  try {  // an error inside a body names the iteration
    render_template_text("#for i 2\n{{NOPE}}\n#endfor\n", {}, "my.wgsl");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("#for i=0"), std::string::npos) << e.what();
  }
}

TEST(ShaderTemplate, EmbeddedShadersIncludeOnce) {
  // math.wgsl is embedded; including it twice yields it once.
  std::string once = render_template_text("#include \"elementwise/math.wgsl\"\n", {}, "t");
  std::string twice = render_template_text("#include \"elementwise/math.wgsl\"\n#include \"elementwise/math.wgsl\"\n", {}, "t");
  EXPECT_EQ(once, twice);
  EXPECT_NE(once.find("fn erf_f32"), std::string::npos);
}

}  // namespace
}  // namespace onda::kernels
