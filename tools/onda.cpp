// The onda command line: one subcommand per job (see commands.h). Every argument error, and every
// failure, is one `onda: error: ...` line on stderr and exit status 1 (docs/audio.md); help and
// --version exit 0; an interrupted audio command exits 128 + the signal (interrupt.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>

#include "commands.h"
#include "interrupt.h"
#include "version_info.h"

namespace {

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string version_text() {
  return fmt::format("onda {} (commit {})\nDawn: {}\nadapter: {}", ONDA_VERSION, ONDA_GIT_COMMIT,
                     ONDA_DAWN_BUILD, onda::cli::default_adapter_line());
}

// The subcommand the user named, for the "see --help" hint.
std::string help_hint(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App* s) { return s->parsed(); }))
    return fmt::format("onda {} --help", sub->get_name());
  return "onda --help";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "onda: audio neural networks on any GPU through WebGPU ('onda COMMAND --help' for a command's options)",
      "onda"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", [] { return version_text(); }, "Print the version, commit, Dawn build and adapter");
  onda::cli::add_info_command(app);
  onda::cli::add_run_command(app);
  onda::cli::add_ops_command(app);
  onda::cli::add_inspect_command(app);
  onda::cli::add_separate_command(app);
  onda::cli::add_enhance_command(app);
  if (argc <= 1) {
    fmt::print("{}", app.help());
    return 0;
  }
  // CLI11 calls an unknown command "A subcommand is required": say which word was not understood.
  const std::string first = argv[1];
  std::string names;
  bool known = false;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
    known = known || sub->get_name() == first;
  }
  if (!first.empty() && first[0] != '-' && !known) {
    fmt::print(stderr, "onda: error: unknown command '{}' (commands: {}; see 'onda --help')\n", first, names);
    return 1;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    fmt::print(stderr, "onda: error: {} (see '{}')\n", one_line(e.what()), help_hint(app));
    return 1;
  } catch (const onda::cli::Interrupted& e) {
    fmt::print(stderr, "onda: {}\n", e.what());
    return e.exit_status();
  } catch (const onda::cli::ExitStatus& e) {
    return e.status;
  } catch (const std::exception& e) {
    fmt::print(stderr, "onda: error: {}\n", one_line(e.what()));
    return 1;
  }
  return 0;
}
