// docs/supported-ops.md is generated from the registry and must be current.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "onda/ops.h"

TEST(SupportedOpsDoc, IsCurrent) {
  // From the source tree this binary was built in, or (on another machine) the working directory.
  std::ifstream file(std::string(ONDA_SOURCE_DIR) + "/docs/supported-ops.md");
  if (!file) file.open("docs/supported-ops.md");
  ASSERT_TRUE(file.good()) << "docs/supported-ops.md not found";
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(text.str(), onda::supported_ops_markdown())
      << "regenerate it: build/onda ops --markdown > docs/supported-ops.md";
}
