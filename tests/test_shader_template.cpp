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

TEST(ShaderTemplate, EmbeddedShadersIncludeOnce) {
  // math.wgsl is embedded; including it twice yields it once.
  std::string once = render_template_text("#include \"elementwise/math.wgsl\"\n", {}, "t");
  std::string twice = render_template_text("#include \"elementwise/math.wgsl\"\n#include \"elementwise/math.wgsl\"\n", {}, "t");
  EXPECT_EQ(once, twice);
  EXPECT_NE(once.find("fn erf_f32"), std::string::npos);
}

}  // namespace
}  // namespace onda::kernels
