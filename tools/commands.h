// The subcommands of the `onda` command line, each in its own file.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace onda::cli {

// Thrown by a command that has reported its own problems (a batch with failed files): main exits
// with `status` and prints nothing more.
struct ExitStatus {
  int status = 1;
};

// Adds `onda info`: prints the adapter, backend, driver, limits and features.
void add_info_command(CLI::App& app);

// The adapter onda picks by default, in one line ("none (reason)" without one): for --version.
std::string default_adapter_line();

// Adds `onda run`: runs an ONNX model on .npy inputs, writes .npy outputs, times and profiles.
void add_run_command(CLI::App& app);

// Adds `onda ops`: the ONNX ops onda supports (--markdown: docs/supported-ops.md).
void add_ops_command(CLI::App& app);

// Adds `onda inspect`: a model's inputs, outputs, opsets, op histogram (unsupported ops marked),
// external data and audio description, without a GPU (--json for scripts).
void add_inspect_command(CLI::App& app);

// Adds `onda separate`: audio files and folders into stems through a separation model (docs/audio.md).
void add_separate_command(CLI::App& app);

// Adds `onda enhance`: audio files and folders through a one-output (enhancement) model.
void add_enhance_command(CLI::App& app);

}  // namespace onda::cli
