#include "graph/einsum_equation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

namespace onda {
namespace {

constexpr int64_t kMaxEllipsisDims = 16;  // labels '0'..'?' stay clear of the letters

struct Term {
  std::string letters_before;  // letters before the ellipsis (all of them when there is none)
  std::string letters_after;
  bool ellipsis = false;
};

Term parse_term(std::string_view text, std::string_view which) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      (term.ellipsis ? term.letters_after : term.letters_before) += ch;
    } else if (text.substr(i, 3) == "...") {
      if (term.ellipsis)
        throw std::invalid_argument(fmt::format("{} '{}' has more than one ellipsis", which, text));
      term.ellipsis = true;
      i += 2;
    } else {
      throw std::invalid_argument(
          fmt::format("{} '{}': unexpected character '{}' (a term holds letters and at most one '...')",
                      which, text, ch));
    }
  }
  return term;
}

std::string ellipsis_labels(int64_t first, int64_t count) {
  std::string labels;
  for (int64_t i = first; i < first + count; ++i) labels += static_cast<char>('0' + i);
  return labels;
}

}  // namespace

EinsumEquation parse_einsum(std::string_view equation, const std::vector<int64_t>& ranks) {
  std::string text;
  for (char ch : equation)
    if (!std::isspace(static_cast<unsigned char>(ch))) text += ch;
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  if (arrow != std::string::npos && text.find("->", arrow + 2) != std::string::npos) {
    throw std::invalid_argument(fmt::format("equation '{}' has more than one '->'", equation));
  }

  std::vector<Term> terms;
  for (size_t begin = 0;;) {
    const size_t comma = lhs.find(',', begin);
    terms.push_back(parse_term(std::string_view(lhs).substr(begin, comma - begin), "input term"));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (terms.size() != ranks.size()) {
    throw std::invalid_argument(
        fmt::format("equation '{}' has {} input terms for {} inputs", equation, terms.size(), ranks.size()));
  }

  // How many dims each input's ellipsis stands for; the widest sets the shared labels.
  std::vector<int64_t> ellipsis_dims(terms.size(), 0);
  int64_t widest = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t letters =
        static_cast<int64_t>(terms[i].letters_before.size() + terms[i].letters_after.size());
    const int64_t extra = ranks[i] - letters;
    if (extra < 0 || (extra > 0 && !terms[i].ellipsis)) {
      throw std::invalid_argument(
          fmt::format("equation '{}': input {} has rank {} but its term names {} dims{}", equation, i,
                      ranks[i], letters, terms[i].ellipsis ? " plus an ellipsis" : ""));
    }
    if (extra > kMaxEllipsisDims) {
      throw std::invalid_argument(fmt::format("equation '{}': an ellipsis of {} dims", equation, extra));
    }
    ellipsis_dims[i] = extra;
    widest = std::max(widest, extra);
  }

  EinsumEquation result;
  std::map<char, int> count;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    result.inputs.push_back(t.letters_before + ellipsis_labels(widest - ellipsis_dims[i], ellipsis_dims[i]) +
                            t.letters_after);
    for (char ch : t.letters_before + t.letters_after) ++count[ch];
  }

  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dims, then every letter used exactly once, in alphabetical order.
    result.output = ellipsis_labels(0, widest);
    for (const auto& [ch, n] : count)
      if (n == 1) result.output += ch;
  } else {
    const Term out = parse_term(std::string_view(text).substr(arrow + 2), "output term");
    if (out.ellipsis) {
      result.output = out.letters_before + ellipsis_labels(0, widest) + out.letters_after;
    } else {
      result.output = out.letters_before;
    }
    for (char ch : out.letters_before + out.letters_after) {
      if (!count.count(ch)) {
        throw std::invalid_argument(
            fmt::format("equation '{}': output label '{}' is in no input", equation, ch));
      }
    }
    std::string sorted = result.output;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      throw std::invalid_argument(fmt::format("equation '{}': the output repeats a label", equation));
    }
  }
  return result;
}

}  // namespace onda
