// The subcommands of the `onda` command line, each in its own file.
#pragma once
#include <CLI/CLI.hpp>

namespace onda::cli {

// Adds `onda info`: prints the adapter, backend, driver, limits and features.
void add_info_command(CLI::App& app);

}  // namespace onda::cli
