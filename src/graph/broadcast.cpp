#include "graph/broadcast.h"

#include <string>

#include "graph/model_error.h"

namespace onda {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ModelError("shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_source_strides(const Shape& from, const Shape& to) {
  const size_t rank = to.size();
  if (from.size() > rank || broadcast_shapes(from, to) != to)
    throw ModelError("shape " + shape_to_string(from) + " does not broadcast to " + shape_to_string(to));
  std::vector<int64_t> source_stride(rank, 0);
  int64_t stride = 1;
  for (size_t i = from.size(); i-- > 0;) {
    const size_t axis = i + (rank - from.size());
    source_stride[axis] = from[i] == 1 ? 0 : stride;
    // (An empty tensor may still claim dims whose product overflows.)
    stride = checked_multiply(stride, from[i], "broadcast");
  }
  return source_stride;
}

std::vector<int64_t> broadcast_source_indices(const Shape& from, const Shape& to) {
  const size_t rank = to.size();
  const std::vector<int64_t> source_stride = broadcast_source_strides(from, to);
  const int64_t count = shape_numel(to);
  std::vector<int64_t> indices(static_cast<size_t>(count));
  std::vector<int64_t> coordinate(rank, 0);
  int64_t source = 0;
  for (int64_t flat = 0; flat < count; ++flat) {
    indices[flat] = source;
    // Odometer increment, updating the source offset incrementally.
    for (size_t axis = rank; axis-- > 0;) {
      if (++coordinate[axis] < to[axis]) {
        source += source_stride[axis];
        break;
      }
      source -= source_stride[axis] * (to[axis] - 1);
      coordinate[axis] = 0;
    }
  }
  return indices;
}

int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result))
    throw ModelError(std::string(what) + ": dimension arithmetic overflows");
  return result;
}

int64_t checked_multiply(int64_t a, int64_t b, const char* what) {
  int64_t result;
  if (__builtin_mul_overflow(a, b, &result))
    throw ModelError(std::string(what) + ": dimension arithmetic overflows");
  return result;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    throw ModelError(std::string(what) + ": axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<double>> per_channel_values(const HostTensor& t, const Shape& x_shape) {
  const int64_t channels = x_shape.size() > 1 ? x_shape[1] : 0;
  const Shape& s = t.shape();
  if (x_shape.size() < 2 || s.size() > x_shape.size()) return std::nullopt;
  const size_t offset = x_shape.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t axis = i + offset;
    if (s[i] != 1 && !(axis == 1 && s[i] == channels)) return std::nullopt;
  }
  std::vector<double> values = t.to_double();
  if (values.size() == 1) values.assign(static_cast<size_t>(channels), values[0]);
  return values;
}

}  // namespace onda
