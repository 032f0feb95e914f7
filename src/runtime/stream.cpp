// onda::Stream (include/onda/stream.h): a Session run frame by frame with its state outputs fed back
// as its state inputs on the GPU (Session::run_split keeps them there; the next run copies them on
// the GPU into its own pool, so a state tensor handed out by states() is never overwritten).
#include "onda/stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

namespace onda {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool is_separator(char c) {
  return c == '_' || c == '.' || c == '-' || c == ':' || c == '/';
}

// The name as words and the separators between them: "cache_out_0" -> {cache, out, 0}, {_, _}.
struct Words {
  std::vector<std::string> words;
  std::vector<char> separators;  // separators[i] joins words[i] and words[i + 1]

  explicit Words(const std::string& name) {
    std::string word;
    for (char c : name) {
      if (is_separator(c)) {
        words.push_back(word);
        separators.push_back(c);
        word.clear();
      } else {
        word += c;
      }
    }
    words.push_back(word);
  }

  // The name with word i replaced (nullopt: dropped, with the separator on its side).
  std::string with(size_t i, const std::optional<std::string>& replacement) const {
    std::string out;
    bool first = true;
    for (size_t k = 0; k < words.size(); ++k) {
      const std::string word = k == i ? replacement.value_or("") : words[k];
      if (k == i && !replacement) continue;
      if (!first) out += separators[k > 0 ? k - 1 : 0];
      out += word;
      first = false;
    }
    return out;
  }
};

// The input names an output's name may feed, most likely first (stream.h lists the rules).
std::vector<std::string> state_input_candidates(const std::string& output) {
  static const std::vector<std::pair<std::string, std::string>> kReplacements = {
      {"out", "in"}, {"output", "input"}, {"outputs", "inputs"}, {"next", "prev"}, {"new", "old"},
      {"hn", "h0"},  {"cn", "c0"},        {"hn", "h"},           {"cn", "c"}};
  static const std::vector<std::string> kDropped = {"out", "output", "next", "new", "updated"};
  const Words words(lower(output));
  std::vector<std::string> candidates;
  for (size_t i = 0; i < words.words.size(); ++i) {
    for (const auto& [from, to] : kReplacements)
      if (words.words[i] == from) candidates.push_back(words.with(i, to));
  }
  for (size_t i = 0; i < words.words.size(); ++i) {
    if (words.words.size() > 1 &&
        std::find(kDropped.begin(), kDropped.end(), words.words[i]) != kDropped.end())
      candidates.push_back(words.with(i, std::nullopt));
  }
  const std::string& last = words.words.back();
  if (last.size() > 1 && last.back() == 'n')
    candidates.push_back(words.with(words.words.size() - 1, last.substr(0, last.size() - 1)));
  return candidates;
}

// A state input is named as one: a word h, c, h0, c0, hx or cx, or one holding state, cache, hidden,
// cell, memory, buffer, past or hist. (Without this, a model with "audio_in" -> "audio_out" would feed
// its own frame back.)
bool looks_like_state(const std::string& input) {
  static const std::vector<std::string> kWords = {"h", "c", "h0", "c0", "hx", "cx"};
  static const std::vector<std::string> kParts = {"state",  "cache",  "hidden", "cell",
                                                  "memory", "buffer", "past",   "hist"};
  for (const auto& word : Words(lower(input)).words) {
    if (std::find(kWords.begin(), kWords.end(), word) != kWords.end()) return true;
    for (const auto& part : kParts)
      if (word.find(part) != std::string::npos) return true;
  }
  return false;
}

bool shapes_agree(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return true;  // unknown rank
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d)
    if (a[d] >= 0 && b[d] >= 0 && a[d] != b[d]) return false;
  return true;
}

const TensorSpec* find_spec(const std::vector<TensorSpec>& specs, const std::string& name) {
  for (const auto& spec : specs)
    if (spec.name == name) return &spec;
  return nullptr;
}

bool fully_static(const Shape& shape) {
  return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
}

}  // namespace

std::map<std::string, std::string> default_state_pairs(const std::vector<TensorSpec>& inputs,
                                                       const std::vector<TensorSpec>& outputs) {
  std::map<std::string, std::string> pairs;    // output -> input
  std::map<std::string, std::string> claimed;  // input -> output
  for (const auto& out : outputs) {
    for (const auto& candidate : state_input_candidates(out.name)) {
      const TensorSpec* in = nullptr;
      for (const auto& spec : inputs)
        if (lower(spec.name) == candidate) in = &spec;
      if (!in || in->name == out.name || !looks_like_state(in->name) || in->dtype != out.dtype ||
          !shapes_agree(in->shape, out.shape))
        continue;
      if (auto other = claimed.find(in->name); other != claimed.end()) {
        throw InputError(fmt::format(
            "streaming: outputs '{}' and '{}' both look like the state of input '{}': give the pairs",
            other->second, out.name, in->name));
      }
      pairs[out.name] = in->name;
      claimed[in->name] = out.name;
      break;
    }
  }
  return pairs;
}

Stream::Stream(std::shared_ptr<Session> session, const StreamOptions& options)
    : session_(std::move(session)) {
  if (!session_) throw InputError("streaming: no session");
  const auto& inputs = session_->inputs();
  const auto& outputs = session_->outputs();
  pairs_ = options.state.empty() ? default_state_pairs(inputs, outputs) : options.state;
  if (pairs_.empty()) {
    throw InputError(
        "streaming: the model has no state pair (no output named after an input, e.g. state_out -> "
        "state_in, hn -> h0): give the pairs (description \"state\", StreamOptions::state)");
  }
  std::set<std::string> state_inputs;
  for (const auto& [out_name, in_name] : pairs_) {
    const TensorSpec* out = find_spec(outputs, out_name);
    const TensorSpec* in = find_spec(inputs, in_name);
    if (!out) throw InputError(fmt::format("streaming: state '{}' is not an output of the model", out_name));
    if (!in) throw InputError(fmt::format("streaming: state '{}' is not an input of the model", in_name));
    if (!state_inputs.insert(in_name).second)
      throw InputError(fmt::format("streaming: input '{}' is fed by two state outputs", in_name));
    if (in->dtype != out->dtype)
      throw InputError(fmt::format("streaming: state output '{}' is {} but input '{}' is {}", out_name,
                                   dtype_name(out->dtype), in_name, dtype_name(in->dtype)));
    state_outputs_.insert(out_name);
  }
  for (const auto& [name, value] : options.initial) {
    if (!state_inputs.count(name))
      throw InputError(fmt::format("streaming: initial value for '{}', which is no state input", name));
    initial_[name] = DeviceTensor::upload(session_->device(), value);
  }
  for (const auto& name : state_inputs) {
    if (initial_.count(name)) continue;
    const TensorSpec* in = find_spec(inputs, name);
    if (!fully_static(in->shape)) {
      throw InputError(
          fmt::format("streaming: state input '{}' has the dynamic shape {}: give its initial value", name,
                      shape_to_string(in->shape)));
    }
    initial_[name] = DeviceTensor::upload(session_->device(), HostTensor(in->dtype, in->shape));
  }
  reset();
}

void Stream::reset() {
  states_ = initial_;
  steps_ = 0;
}

std::map<std::string, HostTensor> Stream::step(const std::map<std::string, HostTensor>& frame) {
  return step(frame, {}, {}).host;
}

RunOutputs Stream::step(const std::map<std::string, HostTensor>& frame,
                        const std::map<std::string, DeviceTensor>& device_frame,
                        const std::set<std::string>& frame_outputs_on_device) {
  auto check_frame_input = [&](const std::string& name) {
    if (states_.count(name))
      throw InputError(fmt::format("streaming: '{}' is a state input: the stream feeds it", name));
  };
  for (const auto& entry : frame) check_frame_input(entry.first);
  std::map<std::string, DeviceTensor> device_inputs = states_;
  for (const auto& [name, tensor] : device_frame) {
    check_frame_input(name);
    device_inputs[name] = tensor;
  }
  std::set<std::string> on_device = state_outputs_;
  for (const auto& name : frame_outputs_on_device) {
    if (state_outputs_.count(name))
      throw InputError(fmt::format("streaming: '{}' is a state output, not a frame output", name));
    on_device.insert(name);
  }
  RunOutputs outputs = session_->run_split(frame, device_inputs, on_device);
  for (const auto& [out_name, in_name] : pairs_) {
    states_[in_name] = outputs.device.at(out_name);
    outputs.device.erase(out_name);
  }
  ++steps_;
  return outputs;
}

std::vector<std::string> Stream::frame_inputs() const {
  std::vector<std::string> names;
  for (const auto& spec : session_->inputs())
    if (!states_.count(spec.name)) names.push_back(spec.name);
  return names;
}

std::vector<std::string> Stream::frame_outputs() const {
  std::vector<std::string> names;
  for (const auto& spec : session_->outputs())
    if (!state_outputs_.count(spec.name)) names.push_back(spec.name);
  return names;
}

}  // namespace onda
