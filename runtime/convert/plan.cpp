#include "convert/plan.hpp"

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/graph.hpp"
#include "switchyard/quant.hpp"
#include "switchyard/types.hpp"
#include "util/bytes.hpp"

namespace sy::convert {
namespace {

GraphTensor shaped(const TensorDesc& d, StorageType as) {
  GraphTensor t;
  t.type = as;
  for (size_t k = 0; k < d.shape.size() && k < 4; ++k) t.ne[k] = d.shape[k];
  graph::set_contiguous_strides(t);
  return t;
}

GraphTensor plain(std::initializer_list<int64_t> ne, StorageType type = StorageType::F32) {
  GraphTensor t;
  t.type = type;
  int k = 0;
  for (int64_t v : ne) t.ne[k++] = v;
  graph::set_contiguous_strides(t);
  return t;
}

// An act-order linear's input order (1-D I32): read by gather_cols, not multiplied.
bool input_order(const TensorDesc& t, StorageType as) { return as == StorageType::I32 && t.shape.size() == 1; }

// Whether the device computes `t` stored as `type` with a kernel of its own: listed in its
// manifest (when it lists any) and accepted by its capability query (when started). An
// input order is no weight type a manifest lists: only a started device's answer for
// gather_cols puts it there.
bool computes(const DeviceTypes& dev, const TensorDesc& t, StorageType type) {
  if (input_order(t, type)) return dev.device && !refused_op(*dev.device, t, type).has_value();
  if (dev.declared && std::find(dev.native.begin(), dev.native.end(), type) == dev.native.end()) return false;
  if (dev.device) return !refused_op(*dev.device, t, type).has_value();
  return dev.declared;
}

std::string type_name(StorageType t) { return std::string(storage_type_name(t)); }

std::string choices_text() {
  const auto& c = convert_to_choices();
  std::string s;
  for (size_t i = 0; i < c.size(); ++i) s += (i == 0 ? "" : i + 1 == c.size() ? " or " : ", ") + c[i];
  return s;
}

}  // namespace

std::string_view action_name(Action a) noexcept {
  switch (a) {
    case Action::native: return "native";
    case Action::repack: return "repack";
    case Action::requantize: return "requantize";
    case Action::generic: return "generic";
    case Action::impossible: return "impossible";
  }
  return "?";
}

std::string Decision::problem(const std::string& device, const std::string& tensor) const {
  return device + " has no " + op + " kernel for " + type_name(from) + " weights (" + tensor + ")";
}

const std::vector<std::string>& convert_to_choices() {
  static const std::vector<std::string> c{"q8_0", "q4_k", "f16"};
  return c;
}

std::optional<StorageType> convert_to_type(std::string_view name) {
  const auto& c = convert_to_choices();
  if (std::find(c.begin(), c.end(), name) == c.end()) return std::nullopt;
  return storage_type_from_name(name);
}

std::optional<OpKind> refused_op(const Device& dev, const TensorDesc& d, StorageType as) {
  const GraphTensor w = shaped(d, as);
  GraphNode n;
  std::vector<GraphTensor> ts{w};
  if (input_order(d, as)) {
    ts = {plain({w.ne[0], 1}), w, plain({w.ne[0], 1})};
    n.op = OpKind::gather_cols, n.src[0] = 0, n.src[1] = 1, n.dst = 2;
    return dev.supports(n, ts) == Support::no ? std::optional<OpKind>(n.op) : std::nullopt;
  }
  if (w.ne[2] > 1) {
    ts.push_back(plain({w.ne[0], 1, 1}));
    ts.push_back(plain({1, 1}, StorageType::I32));
    ts.push_back(plain({w.ne[1], 1, 1}));
    n.op = OpKind::matmul_id, n.src[0] = 0, n.src[1] = 1, n.src[2] = 2, n.dst = 3;
  } else {
    ts.push_back(plain({w.ne[0], 1}));
    ts.push_back(plain({w.ne[1], 1}));
    n.op = OpKind::matmul, n.src[0] = 0, n.src[1] = 1, n.dst = 2;
  }
  if (dev.supports(n, ts) == Support::no) return n.op;
  if (d.name == "token_embd.weight") {
    GraphNode r;
    std::vector<GraphTensor> rt{w, plain({1}, StorageType::I32), plain({w.ne[0], 1})};
    r.op = OpKind::get_rows, r.src[0] = 0, r.src[1] = 1, r.dst = 2;
    if (dev.supports(r, rt) == Support::no) return r.op;
  }
  return std::nullopt;
}

Decision decide(const TensorDesc& t, const DeviceTypes& dev, std::optional<StorageType> convert_to) {
  Decision d;
  d.from = d.to = t.type;
  d.bytes_before = d.bytes_after = t.bytes;
  const bool matrix = t.shape.size() >= 2;
  // The CPU reads vectors (norms, biases) with element-wise ops, as the loader always has;
  // only the matrices a kernel multiplies are its question.
  if (dev.generic && !matrix) return d;
  if (computes(dev, t, t.type)) return d;
  const int64_t n = t.shape.empty() ? 1 : t.shape[0];
  const int64_t rows = n > 0 ? static_cast<int64_t>(t.elements()) / n : 0;
  const StorageTypeDesc* desc = storage_type_desc(t.type);
  // The plugin's exact repack into a type the device computes; the target's blocks must
  // tile a row (storage_row_bytes says when they do not).
  if (desc && desc->repack && desc->repack_to)
    if (const auto to = storage_type_from_name(desc->repack_to)) {
      const auto rb = storage_row_bytes(*to, static_cast<uint64_t>(n));
      if (rb && computes(dev, t, *to)) {
        d.action = Action::repack, d.to = *to, d.bytes_after = *rb * static_cast<uint64_t>(rows);
        return d;
      }
    }
  const bool dequantizes = desc && desc->dequantize_row;
  bool convert_fits = false;
  if (convert_to && matrix && *convert_to != t.type && dequantizes) {
    const StorageTypeDesc* to = storage_type_desc(*convert_to);
    const auto rb = storage_row_bytes(*convert_to, static_cast<uint64_t>(n));
    convert_fits = rb && to && to->quantize_row;
    if (convert_fits && computes(dev, t, *convert_to)) {
      d.action = Action::requantize, d.to = *convert_to, d.bytes_after = *rb * static_cast<uint64_t>(rows);
      return d;
    }
  }
  if (dev.generic && dequantizes && (!dev.device || !refused_op(*dev.device, t, t.type))) {
    d.action = Action::generic;
    return d;
  }
  d.action = Action::impossible;
  const auto op = dev.device ? refused_op(*dev.device, t, t.type) : std::nullopt;
  d.op = std::string(op_name(op.value_or(input_order(t, t.type) ? OpKind::gather_cols : OpKind::matmul)));
  const std::string ty = type_name(t.type);
  if (dev.generic && !dequantizes) {
    d.fix = ty + " has no reference dequantize_row in this build, so not even the generic kernel reads it; use a model "
                 "stored in another type";
  } else if (!matrix) {
    d.fix = "place such tensors on the CPU (placement.overrides)";
  } else if (convert_to) {
    const std::string c(storage_type_name(*convert_to));
    d.fix = "format.convert_to names " + c + ", which " + dev.name +
            (convert_fits ? " does not compute either" : " cannot hold these rows of " + std::to_string(n)) +
            "; name another type (" + choices_text() + ") or place such tensors on the CPU (placement.overrides)";
  } else {
    d.fix = ty + " has no repack into a type " + dev.name + " computes; set format.convert_to (" + choices_text() +
            ") to requantize it at load, or place such tensors on the CPU (placement.overrides)";
  }
  return d;
}

Status convert_rows(const Decision& d, std::span<const std::byte> src, int64_t n, int64_t rows, std::span<std::byte> out) {
  const auto in_row = storage_row_bytes(d.from, static_cast<uint64_t>(n));
  const auto out_row = storage_row_bytes(d.to, static_cast<uint64_t>(n));
  if (!in_row || !out_row || src.size() < *in_row * static_cast<uint64_t>(rows) ||
      out.size() < *out_row * static_cast<uint64_t>(rows))
    return error::invalid_argument("converting " + type_name(d.from) + " to " + type_name(d.to) +
                                   ": the buffers do not hold " + std::to_string(rows) + " rows of " + std::to_string(n));
  if (d.action == Action::repack) {
    const StorageTypeDesc* desc = storage_type_desc(d.from);
    if (!desc || !desc->repack) return error::internal(type_name(d.from) + " has no repack");
    desc->repack(src.data(), out.data(), n, rows);
    return Status::ok();
  }
  if (d.action != Action::requantize)
    return error::internal(std::string("convert_rows: nothing to convert for a ") + std::string(action_name(d.action)) +
                           " decision");
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    if (auto st = dequantize_row(d.from, src.data() + static_cast<uint64_t>(r) * *in_row, row.data(), n); !st) return st;
    if (auto st = quantize_row(d.to, row.data(), out.data() + static_cast<uint64_t>(r) * *out_row, n); !st) return st;
  }
  return Status::ok();
}

void Plan::add(const std::string& device, const TensorDesc& t, const Decision& d) {
  auto it = std::find_if(steps_.begin(), steps_.end(), [&](const Step& s) {
    return s.device == device && s.from == d.from && s.action == d.action && s.to == d.to;
  });
  if (it == steps_.end()) {
    Step s;
    s.device = device, s.from = d.from, s.to = d.to, s.action = d.action, s.first = t.name;
    if (d.action == Action::impossible) s.problem = d.problem(device, t.name) + "; " + d.fix;
    steps_.push_back(std::move(s));
    it = steps_.end() - 1;
  }
  ++it->tensors;
  it->bytes_before += d.bytes_before;
  it->bytes_after += d.bytes_after;
}

int64_t Plan::converted_tensors() const {
  int64_t n = 0;
  for (const auto& s : steps_)
    if (s.action == Action::repack || s.action == Action::requantize) n += s.tensors;
  return n;
}

std::string describe(const Step& s) {
  const std::string from = type_name(s.from), to = type_name(s.to);
  const std::string count = std::to_string(s.tensors) + (s.tensors == 1 ? " tensor, " : " tensors, ");
  const std::string change = util::human_bytes(s.bytes_before) + " -> " + util::human_bytes(s.bytes_after);
  std::string head = from + " on " + s.device + ": ";
  switch (s.action) {
    case Action::native: return head + "native kernel, " + count + util::human_bytes(s.bytes_before);
    case Action::repack:
      return head + "repacked into " + to + " at load (the type's own repack, from " +
             std::string(storage_type_provider(s.from)) + "), " + count + change;
    case Action::requantize: return head + "requantized to " + to + " at load (format.convert_to), " + count + change;
    case Action::generic:
      return head + "generic kernel (a few blocks at a time dequantized into a small buffer; no copy), " + count +
             util::human_bytes(s.bytes_before);
    case Action::impossible: return head + "no kernel, " + count + util::human_bytes(s.bytes_before) + ": " + s.problem;
  }
  return head;
}

nlohmann::json plan_json(const Plan& p) {
  auto out = nlohmann::json::array();
  for (const auto& s : p.steps()) {
    nlohmann::json j{{"device", s.device},
                     {"type", std::string(storage_type_name(s.from))},
                     {"action", std::string(action_name(s.action))},
                     {"to", std::string(storage_type_name(s.to))},
                     {"tensors", s.tensors},
                     {"bytes_before", s.bytes_before},
                     {"bytes_after", s.bytes_after},
                     {"first", s.first}};
    if (!s.problem.empty()) j["problem"] = s.problem;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace sy::convert
