// The onda command line: one subcommand per job (see commands.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"onda: audio neural networks on any GPU through WebGPU"};
  app.require_subcommand(1);
  onda::cli::add_info_command(app);
  onda::cli::add_run_command(app);
  onda::cli::add_ops_command(app);
  onda::cli::add_separate_command(app);
  onda::cli::add_enhance_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "onda: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
