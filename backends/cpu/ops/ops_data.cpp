// Data movement and selection: get_rows, argsort, top_k, concat, type conversion.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "ops.hpp"
#include "switchyard/quant.hpp"

namespace sy::cpu {

Status get_rows(const void* src, StorageType type, int64_t cols, int64_t src_rows, std::span<const int32_t> ids,
                const View& dst, OpScratch* scratch) {
  if (dst.ne[0] != cols || dst.rows() != static_cast<int64_t>(ids.size()))
    return error::invalid_argument("cpu: get_rows: the output must be " + std::to_string(cols) + " x " +
                                   std::to_string(ids.size()));
  const auto row_bytes = storage_row_bytes(type, static_cast<uint64_t>(cols));
  if (!row_bytes) return error::invalid_argument("cpu: get_rows: rows are not whole blocks");
  OpScratch local;
  float* buf = (scratch ? *scratch : local).floats(static_cast<size_t>(cols));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= src_rows)
      return error::invalid_argument("cpu: get_rows: row id " + std::to_string(ids[i]) + " is outside 0.." +
                                     std::to_string(src_rows - 1));
    const auto* r = static_cast<const uint8_t*>(src) + static_cast<size_t>(ids[i]) * *row_bytes;
    if (auto st = dequantize_row(type, r, buf, cols); !st) return st;
    float* out = dst.row(static_cast<int64_t>(i));
    for (int64_t j = 0; j < cols; ++j) out[j * dst.st[0]] = buf[j];
  }
  return Status::ok();
}

namespace {
void order_row(const View& x, int64_t r, std::vector<int32_t>& idx) {
  const float* row = x.row(r);
  idx.resize(static_cast<size_t>(x.ne[0]));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return row[a * x.st[0]] > row[b * x.st[0]]; });
}
}  // namespace

Status argsort_desc(const View& x, std::span<int32_t> out) {
  if (out.size() != static_cast<size_t>(x.ne[0] * x.rows()))
    return error::invalid_argument("cpu: argsort: the output needs one index per element");
  std::vector<int32_t> idx;
  for (int64_t r = 0; r < x.rows(); ++r) {
    order_row(x, r, idx);
    std::copy(idx.begin(), idx.end(), out.begin() + r * x.ne[0]);
  }
  return Status::ok();
}

Status top_k(const View& x, int64_t k, std::span<int32_t> out, OpScratch* scratch) {
  if (k < 1 || k > x.ne[0])
    return error::invalid_argument("cpu: top_k: k = " + std::to_string(k) + " must be between 1 and the row length " +
                                   std::to_string(x.ne[0]));
  if (out.size() != static_cast<size_t>(k * x.rows())) return error::invalid_argument("cpu: top_k: the output needs k indices per row");
  OpScratch local;
  int32_t* idx = (scratch ? *scratch : local).ints(static_cast<size_t>(x.ne[0]));
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* row = x.row(r);
    std::iota(idx, idx + x.ne[0], 0);
    // partial_sort is not stable; the index tie-break keeps the order deterministic.
    std::partial_sort(idx, idx + k, idx + x.ne[0], [&](int32_t a, int32_t b) {
      const float va = row[a * x.st[0]], vb = row[b * x.st[0]];
      return va > vb || (va == vb && a < b);
    });
    std::copy(idx, idx + k, out.begin() + r * k);
  }
  return Status::ok();
}

Status concat(const View& a, const View& b, int dim, const View& y) {
  if (dim < 0 || dim > 3) return error::invalid_argument("cpu: concat: dimension must be 0..3");
  for (int d = 0; d < 4; ++d) {
    const int64_t want = d == dim ? a.ne[d] + b.ne[d] : a.ne[d];
    if ((d != dim && b.ne[d] != a.ne[d]) || y.ne[d] != want)
      return error::invalid_argument("cpu: concat: shapes do not line up in dimension " + std::to_string(d));
  }
  for (int64_t i3 = 0; i3 < y.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < y.ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < y.ne[1]; ++i1)
        for (int64_t i0 = 0; i0 < y.ne[0]; ++i0) {
          int64_t i[4] = {i0, i1, i2, i3};
          const bool from_b = i[dim] >= a.ne[dim];
          if (from_b) i[dim] -= a.ne[dim];
          y.at(i0, i1, i2, i3) = from_b ? b.at(i[0], i[1], i[2], i[3]) : a.at(i[0], i[1], i[2], i[3]);
        }
  return Status::ok();
}

Status convert_from_f32(const View& x, StorageType type, void* out, OpScratch* scratch) {
  const auto row_bytes = storage_row_bytes(type, static_cast<uint64_t>(x.ne[0]));
  if (!row_bytes) return error::invalid_argument("cpu: convert: rows are not whole blocks");
  OpScratch local;
  float* buf = (scratch ? *scratch : local).floats(static_cast<size_t>(x.ne[0]));
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* row = x.row(r);
    for (int64_t i = 0; i < x.ne[0]; ++i) buf[i] = row[i * x.st[0]];
    if (auto st = quantize_row(type, buf, static_cast<uint8_t*>(out) + r * *row_bytes, x.ne[0]); !st) return st;
  }
  return Status::ok();
}

Status convert_to_f32(const void* in, StorageType type, const View& y, OpScratch* scratch) {
  const auto row_bytes = storage_row_bytes(type, static_cast<uint64_t>(y.ne[0]));
  if (!row_bytes) return error::invalid_argument("cpu: convert: rows are not whole blocks");
  OpScratch local;
  float* buf = (scratch ? *scratch : local).floats(static_cast<size_t>(y.ne[0]));
  for (int64_t r = 0; r < y.rows(); ++r) {
    if (auto st = dequantize_row(type, static_cast<const uint8_t*>(in) + r * *row_bytes, buf, y.ne[0]); !st)
      return st;
    float* row = y.row(r);
    for (int64_t i = 0; i < y.ne[0]; ++i) row[i * y.st[0]] = buf[i];
  }
  return Status::ok();
}

}  // namespace sy::cpu
