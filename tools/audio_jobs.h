// The planning half of `onda separate` / `onda enhance`: which files the arguments name (folders
// scanned recursively), which file each output goes to (--filename templates), and every check
// that can be made before the model is opened: collisions, existing outputs, folders in the way,
// unwritable folders. Output folders are created only for a file being written and removed again
// when its writing fails.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace onda::cli {

struct AudioInput {
  std::filesystem::path path;
  std::string track;      // the file name without its extension
  std::string folder;     // its folder below the folder argument it was found in ("" for a file argument)
  std::string extension;  // lower case, no dot
};

// Files as given, folders scanned recursively for the extensions libsndfile reads (sorted by path);
// throws std::invalid_argument for a path that does not exist or a folder without audio files.
std::vector<AudioInput> expand_inputs(const std::vector<std::string>& arguments);

// Throws std::invalid_argument for a --filename template with an unknown {placeholder}, an
// absolute path or '..'. Placeholders: {track} {stem} {ext} {folder} {input_ext}.
void check_filename_template(const std::string& pattern);
std::filesystem::path expand_filename(const std::string& pattern, const AudioInput& input,
                                      const std::string& stem, const std::string& extension);

// Throws std::invalid_argument (one line, naming the path and the fix) when two outputs are the
// same file, an output is a folder, exists (unless `overwrite`), or its folder cannot be created
// or written to. `outputs[i]` are the files of `inputs[i]`.
void check_outputs(const std::vector<AudioInput>& inputs,
                   const std::vector<std::vector<std::filesystem::path>>& outputs, bool overwrite);

// Creates the folders `files` need; the destructor removes the ones it created (when empty) unless
// keep() was called, so a failed or interrupted file leaves no empty folder behind.
class OutputFolders {
 public:
  explicit OutputFolders(const std::vector<std::filesystem::path>& files);
  ~OutputFolders();
  OutputFolders(const OutputFolders&) = delete;
  OutputFolders& operator=(const OutputFolders&) = delete;
  void keep() { keep_ = true; }

 private:
  void create(const std::vector<std::filesystem::path>& files);
  void remove_created();
  std::vector<std::filesystem::path> created_;  // outermost first
  bool keep_ = false;
};

}  // namespace onda::cli
