#include "kernels/shader_template.h"

#include <fmt/format.h>

#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "kernels/common/tensor_access.h"

namespace onda::kernels {

const std::map<std::string, std::string_view>& embedded_shaders();  // generated at build time

std::string_view shader_text(const std::string& name) {
  const auto& shaders = embedded_shaders();
  auto it = shaders.find(name);
  if (it == shaders.end()) throw std::runtime_error(fmt::format("no embedded shader named '{}'", name));
  return it->second;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool truthy(const TemplateValues& values, const std::string& name) {
  auto it = values.find(name);
  return it != values.end() && it->second != "0" && it->second != "false" && !it->second.empty();
}

// Appends `line` with its {{NAME}}s replaced to `out`. (The label is formatted only for an error: a
// render writes thousands of lines, and formatting one per line was most of its time.)
void substitute(std::string_view line, const TemplateValues& values, const std::string& label, int line_number,
                std::string& out) {
  size_t pos = 0;
  while (true) {
    size_t open = line.find("{{", pos);
    if (open == std::string_view::npos) break;
    size_t close = line.find("}}", open);
    if (close == std::string_view::npos)
      throw std::runtime_error(fmt::format("{}:{}: unclosed '{{{{'", label, line_number));
    out.append(line.substr(pos, open - pos));
    const std::string_view name = trim(line.substr(open + 2, close - open - 2));
    auto it = values.find(std::string(name));
    if (it == values.end())
      throw std::runtime_error(fmt::format("{}:{}: template value '{}' not given", label, line_number, name));
    out += it->second;
    pos = close + 2;
  }
  out.append(line.substr(pos));
}

void render_into(std::string_view text, const TemplateValues& values, const std::string& label,
                 std::set<std::string>& included, std::string& out) {
  struct Branch {
    bool parent_active, condition, in_else;
  };
  std::vector<Branch> stack;
  bool active = true;
  size_t start = 0;
  int line_number = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    ++line_number;
    std::string_view t = trim(line);
    auto fail = [&](const std::string& what) {
      throw std::runtime_error(fmt::format("{}:{}: {}", label, line_number, what));
    };
    if (t.starts_with("#if") || t.starts_with("#ifdef") || t.starts_with("#ifndef")) {
      const bool is_ifdef = t.starts_with("#ifdef"), is_ifndef = t.starts_with("#ifndef");
      std::string name(trim(t.substr(is_ifdef ? 6 : is_ifndef ? 7 : 3)));
      if (name.empty()) fail("#if without a name");
      bool condition = is_ifdef ? values.count(name) > 0 : is_ifndef ? values.count(name) == 0 : truthy(values, name);
      stack.push_back({active, condition, false});
      active = active && condition;
    } else if (t.starts_with("#else")) {
      if (stack.empty() || stack.back().in_else) fail("#else without #if");
      stack.back().in_else = true;
      active = stack.back().parent_active && !stack.back().condition;
    } else if (t.starts_with("#endif")) {
      if (stack.empty()) fail("#endif without #if");
      active = stack.back().parent_active;
      stack.pop_back();
    } else if (t.starts_with("#for")) {
      // #for NAME COUNT ... #endfor: the body once per NAME = 0 .. COUNT - 1 (COUNT a number or a
      // template value), rendered with {{NAME}} bound; bodies nest and may hold #if blocks.
      std::string_view rest = trim(t.substr(4));
      const size_t space = rest.find(' ');
      if (space == std::string_view::npos) fail("#for needs a name and a count");
      const std::string name(rest.substr(0, space));
      const std::string count_text(trim(rest.substr(space + 1)));
      // The body: up to the matching #endfor.
      size_t body_start = end == text.size() ? end : end + 1, pos = body_start, body_end = std::string_view::npos;
      int depth = 1, body_lines = 0;
      while (pos <= text.size()) {
        size_t line_end = text.find('\n', pos);
        if (line_end == std::string_view::npos) line_end = text.size();
        std::string_view inner = trim(text.substr(pos, line_end - pos));
        ++body_lines;
        if (inner.starts_with("#for")) ++depth;
        if (inner.starts_with("#endfor") && --depth == 0) {
          body_end = pos;
          end = line_end;
          break;
        }
        if (line_end == text.size()) break;
        pos = line_end + 1;
      }
      if (body_end == std::string_view::npos) fail("#for without #endfor");
      if (active) {
        std::string count_value = count_text;
        if (auto it = values.find(count_text); it != values.end()) count_value = it->second;
        int count = 0;
        try {
          size_t used = 0;
          count = std::stoi(count_value, &used);
          if (used != count_value.size() || count < 0) throw std::invalid_argument("count");
        } catch (const std::exception&) {
          fail(fmt::format("#for count '{}' is not a non-negative number", count_text));
        }
        TemplateValues inner_values = values;
        std::string& index = inner_values[name];
        // Without the newline before #endfor (render_into ends every line with one itself).
        const std::string_view body = text.substr(body_start, body_end > body_start ? body_end - 1 - body_start : 0);
        // The body's label names the index only in an error (formatting it per pass was a third of a
        // render's time).
        const std::string body_label = fmt::format("{}:{} (#for {})", label, line_number, name);
        for (int i = 0; i < count && body_end > body_start; ++i) {
          index = std::to_string(i);
          try {
            render_into(body, inner_values, body_label, included, out);
          } catch (const std::runtime_error& e) {
            std::string message = e.what();
            if (message.starts_with(body_label))
              message = fmt::format("{}:{} (#for {}={})", label, line_number, name, i) + message.substr(body_label.size());
            throw std::runtime_error(message);
          }
        }
      }
      line_number += body_lines;
    } else if (t.starts_with("#endfor")) {
      fail("#endfor without #for");
    } else if (t.starts_with("#include")) {
      if (active) {
        size_t q1 = t.find('"'), q2 = t.rfind('"');
        if (q1 == std::string_view::npos || q2 <= q1) fail("#include needs a quoted shader name");
        std::string name(t.substr(q1 + 1, q2 - q1 - 1));
        if (included.insert(name).second) render_into(shader_text(name), values, name, included, out);
      }
    } else if (active) {
      substitute(line, values, label, line_number, out);
      out += '\n';
    }
    if (end == text.size()) break;
    start = end + 1;
  }
  if (!stack.empty()) throw std::runtime_error(fmt::format("{}: #if without #endif", label));
}

}  // namespace

std::string render_template_text(std::string_view text, const TemplateValues& values, const std::string& label) {
  std::set<std::string> included;
  std::string out;
  out.reserve(2 * text.size());  // #include and #for grow it: fewer reallocations
  render_into(text, values, label, included, out);
  return out;
}

std::string render_shader(const std::string& name, const TemplateValues& values) {
  const TemplateValues* used = &values;
  TemplateValues expanded;
  for (const auto& [key, value] : values) {
    std::optional<std::string> accessor = expand_tensor_access(value);
    if (!accessor) continue;
    if (used == &values) expanded = values, used = &expanded;
    expanded[key] = std::move(*accessor);
  }
  return render_template_text(shader_text(name), *used, name);
}

const wgpu::ComputePipeline& shader_pipeline(gpu::PipelineCache& pipelines, const std::string& name,
                                             TemplateValues values, const std::string& label) {
  gpu::PipelineKey key{name, std::move(values)};
  return pipelines.get(
      key, [&] { return render_shader(name, key.values); }, label);
}

}  // namespace onda::kernels
