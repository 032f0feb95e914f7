// The subcommands of the `onda` command line, each in its own file.
#pragma once
#include <CLI/CLI.hpp>

namespace onda::cli {

// Adds `onda info`: prints the adapter, backend, driver, limits and features.
void add_info_command(CLI::App& app);

// Adds `onda run`: runs an ONNX model on .npy inputs, writes .npy outputs, times and profiles.
void add_run_command(CLI::App& app);

// Adds `onda ops`: the ONNX ops onda supports (--markdown: docs/supported-ops.md).
void add_ops_command(CLI::App& app);

// Adds `onda separate`: audio files into stems through a separation model (docs/audio.md).
void add_separate_command(CLI::App& app);

// Adds `onda enhance`: one audio file through a one-output (enhancement) model.
void add_enhance_command(CLI::App& app);

}  // namespace onda::cli
