// docs/supported-ops.md is generated from the registry and must be current.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "onda/ops.h"
#include "test_paths.h"

TEST(SupportedOpsDoc, IsCurrent) {
  // From the checkout above this binary (test_paths.h), else the working directory.
  std::ifstream file(onda::test::checkout_dir() / "docs/supported-ops.md");
  if (!file) file.open("docs/supported-ops.md");
  ASSERT_TRUE(file.good()) << "docs/supported-ops.md not found";
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(text.str(), onda::supported_ops_markdown())
      << "regenerate it: build/onda ops --markdown > docs/supported-ops.md";
}
