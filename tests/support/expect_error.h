// The message of the std::invalid_argument a call throws, for tests that check what an error says.
#pragma once
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace onda::test {

// The message of the std::invalid_argument that `f` throws; fails the test when it throws none.
template <typename F>
std::string invalid_argument_message(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument";
  return "";
}

}  // namespace onda::test
