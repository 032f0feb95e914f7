#include "audio_jobs.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <stdexcept>

#include "onda/audio.h"

namespace onda::cli {
namespace {

namespace fs = std::filesystem;

std::string lower_extension(const fs::path& path) {
  std::string extension = path.extension().string();
  if (!extension.empty()) extension.erase(0, 1);
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension;
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

const std::vector<std::string> kPlaceholders = {"track", "stem", "ext", "folder", "input_ext"};

// The closest folder of `path` that exists (the one a new folder would be created in).
fs::path existing_ancestor(fs::path path) {
  std::error_code ec;
  path = path.parent_path();
  while (!path.empty() && !fs::exists(path, ec)) path = path.parent_path();
  return path.empty() ? fs::path(".") : path;
}

}  // namespace

std::vector<AudioInput> expand_inputs(const std::vector<std::string>& arguments) {
  const std::vector<std::string> readable = audio::readable_audio_extensions();
  std::vector<AudioInput> inputs;
  for (const auto& argument : arguments) {
    const fs::path path(argument);
    std::error_code ec;
    if (!fs::exists(path, ec))
      throw std::invalid_argument(fmt::format("no such file or folder '{}'", argument));
    if (!fs::is_directory(path, ec)) {
      inputs.push_back({path, path.stem().string(), "", lower_extension(path)});
      continue;
    }
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!name.empty() && name[0] == '.') {  // hidden files and folders (our own .partial files too)
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file(ec)) continue;
      const std::string extension = lower_extension(it->path());
      if (std::find(readable.begin(), readable.end(), extension) != readable.end())
        found.push_back(it->path());
    }
    if (ec) throw std::invalid_argument(fmt::format("cannot list folder '{}': {}", argument, ec.message()));
    if (found.empty())
      throw std::invalid_argument(fmt::format("folder '{}' holds no audio files (looked for .{})", argument,
                                              joined(readable, ", .")));
    std::sort(found.begin(), found.end());
    for (const auto& file : found) {
      const std::string folder = file.parent_path().lexically_relative(path).string();
      inputs.push_back({file, file.stem().string(), folder == "." ? "" : folder, lower_extension(file)});
    }
  }
  return inputs;
}

void check_filename_template(const std::string& pattern) {
  if (pattern.empty()) throw std::invalid_argument("--filename is empty");
  for (size_t open = pattern.find('{'); open != std::string::npos; open = pattern.find('{', open + 1)) {
    const size_t close = pattern.find('}', open);
    const std::string name =
        pattern.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1);
    if (close == std::string::npos ||
        std::find(kPlaceholders.begin(), kPlaceholders.end(), name) == kPlaceholders.end())
      throw std::invalid_argument(fmt::format("--filename '{}': unknown placeholder '{{{}}}' (known: {{{}}})",
                                              pattern, name, joined(kPlaceholders, "}, {")));
  }
  const fs::path path(pattern);
  if (path.is_absolute())
    throw std::invalid_argument(fmt::format("--filename '{}' must be relative to -o", pattern));
  for (const auto& part : path)
    if (part == "..")
      throw std::invalid_argument(fmt::format("--filename '{}' may not leave -o through '..'", pattern));
}

fs::path expand_filename(const std::string& pattern, const AudioInput& input, const std::string& stem,
                         const std::string& extension) {
  const std::map<std::string, std::string> values = {{"track", input.track},
                                                     {"stem", stem},
                                                     {"ext", extension},
                                                     {"folder", input.folder},
                                                     {"input_ext", input.extension}};
  std::string text;
  for (size_t i = 0; i < pattern.size();) {
    const size_t close = pattern[i] == '{' ? pattern.find('}', i) : std::string::npos;
    if (close != std::string::npos) {
      text += values.at(pattern.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      text += pattern[i++];
    }
  }
  // An empty {folder} at the start ("{folder}/{track}...") must not make the path absolute.
  text.erase(0, text.find_first_not_of('/'));
  return fs::path(text).lexically_normal();
}

void check_outputs(const std::vector<AudioInput>& inputs, const std::vector<std::vector<fs::path>>& outputs,
                   bool overwrite) {
  std::map<fs::path, size_t> owner;  // output file -> the input writing it
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const auto& file : outputs[i]) {
      const fs::path key = fs::absolute(file).lexically_normal();
      const auto [it, fresh] = owner.emplace(key, i);
      if (!fresh) {
        if (it->second == i)
          throw std::invalid_argument(
              fmt::format("two outputs of '{}' would both go to '{}': put {{stem}} in --filename",
                          inputs[i].path.string(), file.string()));
        throw std::invalid_argument(
            fmt::format("'{}' and '{}' would both write '{}': rename one, or put {{folder}} or {{input_ext}} "
                        "in --filename "
                        "(e.g. '{{track}}_{{input_ext}}/{{stem}}.{{ext}}')",
                        inputs[it->second].path.string(), inputs[i].path.string(), file.string()));
      }
      std::error_code ec;
      if (fs::is_directory(file, ec))
        throw std::invalid_argument(fmt::format("output '{}' is a folder", file.string()));
      if (fs::exists(file, ec) && !overwrite)
        throw std::invalid_argument(
            fmt::format("output '{}' exists: give --overwrite to replace it, or another -o", file.string()));
      const fs::path folder = existing_ancestor(file);
      if (!fs::is_directory(folder, ec))
        throw std::invalid_argument(
            fmt::format("cannot write '{}': '{}' is a file, not a folder", file.string(), folder.string()));
      if (::access(folder.c_str(), W_OK | X_OK) != 0)
        throw std::invalid_argument(
            fmt::format("cannot write '{}': folder '{}' is not writable", file.string(), folder.string()));
    }
  }
}

OutputFolders::OutputFolders(const std::vector<fs::path>& files) {
  try {
    create(files);
  } catch (...) {
    remove_created();
    throw;
  }
}

void OutputFolders::create(const std::vector<fs::path>& files) {
  std::set<fs::path> wanted;
  for (const auto& file : files) {
    std::error_code ec;
    std::vector<fs::path> missing;  // innermost first
    for (fs::path folder = file.parent_path(); !folder.empty() && !fs::exists(folder, ec);
         folder = folder.parent_path())
      missing.push_back(folder);
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      if (!wanted.insert(*it).second) continue;
      if (!fs::create_directory(*it, ec) && ec) {
        throw audio::AudioError(fmt::format("cannot create folder '{}': {}", it->string(), ec.message()));
      }
      created_.push_back(*it);
    }
  }
}

OutputFolders::~OutputFolders() {
  if (!keep_) remove_created();
}

void OutputFolders::remove_created() {
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    std::error_code ec;
    if (fs::is_empty(*it, ec)) fs::remove(*it, ec);
  }
}

}  // namespace onda::cli
