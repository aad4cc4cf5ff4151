#include "model/weights.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "graph/graph.hpp"
#include "log/log.hpp"
#include "model/prefault.hpp"
#include "model/static_scales.hpp"
#include "planner/model_desc.hpp"
#include "switchyard/quant.hpp"

namespace sy::model {

namespace {

// Weights share a few large buffers per device (allocation count and driver limits on a
// single allocation both stay small); a larger tensor gets a buffer of its own.
constexpr uint64_t kPoolChunk = 1ull << 30;
constexpr uint64_t kAlign = 256;

// mlock's unit is the page: the range is widened to the pages that hold [p, p + n).
bool lock_pages(const std::byte* p, size_t n) {
  if (n == 0) return true;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const auto end = (reinterpret_cast<uintptr_t>(p) + n + page - 1) & ~(page - 1);
  return mlock(reinterpret_cast<const void*>(begin), end - begin) == 0;
}

// Drops the pages of a read-only file mapping that lie wholly inside [p, p + n) from this
// process (the page cache keeps them): a tensor copied elsewhere at load must not count
// twice in RSS. Pages shared with a neighbour stay; it would only fault them in again.
void release_pages(std::span<const std::byte> v) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(v.data()) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<uintptr_t>(v.data()) + v.size()) & ~(page - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// Repacks a tensor that the host reads from the file's mapping or a buffer. Repacking is a
// permuted copy whose time goes to page faults and memory traffic on both sides, so the
// source's pages are mapped in one call (when they fit, the prefaulting rule) and the row
// groups are split across the machine's cores (4-layer qwen3-8b Q8_0, 2 GiB, 2 cores: load
// 1.6 -> 0.95 s, medians of four). A mapped source is faulted in and released in chunks, so
// a large matrix never has both copies resident: qwen3-8b's Q6_K output head (0.5 GiB) took
// peak RSS from 1.02x to 1.11x of the file when it was repacked whole.
Status repack_tensor(StorageType to, std::span<const std::byte> src, std::byte* out, int64_t n, int64_t rows,
                     bool mapped) {
  const int64_t group = interleave_rows(to), groups = rows / group;
  if (groups == 0 || rows % group != 0) return repack_rows(to, src.data(), out, n, rows);  // its error
  const size_t group_bytes = src.size() / static_cast<size_t>(groups);
  constexpr size_t kChunk = size_t{64} << 20;
  constexpr size_t kPerThread = size_t{8} << 20;  // below this a thread costs more than it saves
  const auto per_chunk = static_cast<int64_t>(std::max<size_t>(1, kChunk / std::max<size_t>(1, group_bytes)));
  for (int64_t c0 = 0; c0 < groups; c0 += per_chunk) {
    const int64_t c1 = std::min(groups, c0 + per_chunk);
    const auto chunk = src.subspan(static_cast<size_t>(c0) * group_bytes, static_cast<size_t>(c1 - c0) * group_bytes);
    if (mapped) {
      const MappedRange range{chunk.data(), chunk.size()};
      (void)prefault({&range, 1});
    }
    const auto threads = static_cast<int64_t>(std::clamp<size_t>(
        std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), chunk.size() / kPerThread), 1,
        static_cast<size_t>(c1 - c0)));
    std::vector<Status> st(static_cast<size_t>(threads));
    const auto part = [&](int64_t i) {
      const int64_t g0 = c0 + (c1 - c0) * i / threads, g1 = c0 + (c1 - c0) * (i + 1) / threads;
      const size_t at = static_cast<size_t>(g0) * group_bytes;
      st[static_cast<size_t>(i)] = repack_rows(to, src.data() + at, out + at, n, (g1 - g0) * group);
    };
    {
      std::vector<std::jthread> helpers;
      for (int64_t i = 1; i < threads; ++i) helpers.emplace_back(part, i);
      part(0);
    }
    for (auto& s : st)
      if (!s) return s;
    if (mapped) release_pages(chunk);
  }
  return Status::ok();
}

GraphTensor shaped(const TensorDesc& d) {
  GraphTensor t;
  t.type = d.type;
  for (size_t k = 0; k < d.shape.size() && k < 4; ++k) t.ne[k] = static_cast<int64_t>(d.shape[k]);
  graph::set_contiguous_strides(t);
  return t;
}

struct Pending {
  size_t index;      // in the source's tensor list
  int device;
  convert::Decision plan;  // repack or requantize: converted at load into plan.to
  bool repack;       // rearrange into its 16-row interleaved layout at load (same bytes)
  uint64_t bytes;    // as stored on the device
  size_t chunk = 0;  // pool chunk of its device
  uint64_t offset = 0;
};

}  // namespace

bool repacks_on_host(const Device& host, const TensorDesc& d) {
  const StorageType to = interleaved_of(d.type);
  GraphTensor t = shaped(d);
  if (d.shape.size() < 2 || to == d.type || d.name == "token_embd.weight" || t.ne[1] % interleave_rows(to) != 0)
    return false;
  return !convert::refused_op(host, d, to).has_value();
}

Result<Weights> Weights::load(const ModelSource& src, const WeightPlacement& where, const WeightOptions& opts) {
  Weights w;
  auto lg = log::get("model");
  const auto descs = src.tensors();
  if (opts.static_activations)
    if (auto st = check_static_scales(descs); !st) return st;
  w.static_activations_ = opts.static_activations;
  const auto& devices = where.devices;
  w.host_ = where.host;
  w.placed_.resize(devices.size());
  bool lock_failed = false;
  int lock_errno = 0;
  auto lock = [&](const void* p, size_t n) {
    if (!opts.mlock || lock_failed || p == nullptr) return;
    if (lock_pages(static_cast<const std::byte*>(p), n)) {
      w.locked_bytes_ += n;
    } else {
      lock_failed = true;
      lock_errno = errno;
    }
  };
  const auto host_dev = static_cast<size_t>(where.host);
  const bool host_maps = devices[host_dev]->info().reads_host_memory;
  // Repacked copies are anonymous memory, which cannot be paged back to the file: a model
  // mapped in place is repacked only when the host's share fits in 90% of available memory
  // (the rule prefaulting follows), so a model larger than RAM still runs from its mapping.
  uint64_t host_bytes = 0;
  for (size_t i = 0; i < descs.size(); ++i)
    if (where.tensor_device.empty() || where.tensor_device[i] == where.host) host_bytes += descs[i].bytes;
  const uint64_t available = mem_available();
  const bool repack_fits = !opts.mmap || (available > 0 && host_bytes <= available / 10 * 9);
  bool repack_declined = false;
  std::set<std::pair<int, StorageType>> told;
  std::vector<Pending> uploads;
  std::vector<MappedRange> mapped;  // read in place by the host: prefaulted below
  // With an output matrix of its own, the embedding table is only looked up row by row
  // (get_rows reads one row per token): prefaulting it would make the whole table resident
  // (0.33 GiB of qwen3-8b's 4.68) for the few rows a prompt touches. A tied table is the
  // output head too, read whole every step, and is prefaulted like any matrix.
  const bool embd_by_rows = std::any_of(descs.begin(), descs.end(), [](const TensorDesc& d) { return d.name == "output.weight"; });
  // What each device computes: as its backend states it, else its supports() alone.
  std::vector<convert::DeviceTypes> types = where.types;
  types.resize(devices.size());
  for (size_t dv = 0; dv < devices.size(); ++dv) {
    if (types[dv].name.empty()) types[dv].name = devices[dv]->info().name;
    if (where.types.empty()) types[dv].generic = dv == host_dev;
    types[dv].device = devices[dv];
  }
  for (size_t i = 0; i < descs.size(); ++i) {
    const TensorDesc& d = descs[i];
    GraphTensor t = shaped(d);
    int dev = where.tensor_device.empty() ? where.host : where.tensor_device[i];
    convert::Decision plan;
    if (dev != where.host) {
      plan = convert::decide(d, types[static_cast<size_t>(dev)], opts.convert_to);
      if (plan.action == convert::Action::impossible) {
        const std::string& dname = types[static_cast<size_t>(dev)].name;
        if (opts.strict)
          return error::unsupported(plan.problem(dname, d.name) +
                                    " and `strict: true` forbids running it elsewhere; " + plan.fix);
        if (told.insert({dev, d.type}).second)
          lg->warn("fallback: {} has no {} kernel for {} weights; tensors of that type stay in RAM and the CPU runs "
                   "their {} (first: {}); {}",
                   dname, plan.op, storage_type_name(d.type), plan.op, d.name, plan.fix);
        dev = where.host;
        ++w.kept_on_host_;
      }
    }
    if (dev == where.host) {
      plan = convert::decide(d, types[host_dev], opts.convert_to);
      if (plan.action == convert::Action::impossible)
        return error::unsupported("tensor " + d.name + " is stored as " + std::string(storage_type_name(d.type)) +
                                  ", which " + types[host_dev].name + " cannot compute: " + plan.fix);
    }
    w.plan_.add(types[static_cast<size_t>(dev)].name, d, plan);
    const bool converts = plan.action == convert::Action::repack || plan.action == convert::Action::requantize;
    if (converts) ++w.converted_;
    bool repack = dev == where.host && !converts && repacks_on_host(*devices[host_dev], d);
    if (repack && !repack_fits) {
      repack = false;
      repack_declined = true;
    }
    const uint64_t bytes = plan.bytes_after;
    w.bytes_ += d.bytes;
    auto& placed = w.placed_[static_cast<size_t>(dev)];
    placed.weights += bytes;
    if (planner::is_routed_expert(d.name)) placed.expert_weights += bytes;
    if (dev == where.host && host_maps && opts.mmap && !converts && !repack) {
      if (auto view = src.view(i)) {
        t.data = const_cast<std::byte*>(view->data());  // weights are only read
        w.mapped_bytes_ += view->size();
        lock(view->data(), view->size());
        if (!(embd_by_rows && d.name == "token_embd.weight")) mapped.emplace_back(view->data(), view->size());
        w.tensors_.emplace(d.name, t);
        continue;
      }
    }
    uploads.push_back({i, dev, converts ? plan : convert::Decision{}, repack, bytes});
  }

  // Each distinct conversion once, with what it costs in memory.
  auto clg = log::get("convert");
  for (const auto& step : w.plan_.steps())
    if (step.action != convert::Action::native) clg->info("{}", convert::describe(step));

  // Pool: per device, tensors packed into chunks in file order.
  std::vector<std::vector<uint64_t>> chunk_sizes(devices.size());
  for (auto& u : uploads) {
    auto& sizes = chunk_sizes[static_cast<size_t>(u.device)];
    const uint64_t need = (u.bytes + kAlign - 1) / kAlign * kAlign;
    if (sizes.empty() || (sizes.back() + need > kPoolChunk && sizes.back() > 0)) sizes.push_back(0);
    u.chunk = sizes.size() - 1;
    u.offset = sizes.back();
    sizes.back() += need;
  }
  std::vector<std::vector<Buffer*>> chunks(devices.size());
  for (size_t dv = 0; dv < devices.size(); ++dv)
    for (uint64_t size : chunk_sizes[dv]) {
      auto buf = devices[dv]->allocate(static_cast<size_t>(size), BufferKind::device_local);
      if (!buf)
        return Status(buf.status().code(), "placing " + std::to_string(size >> 20) + " MiB of weights on " +
                                               devices[dv]->info().name + ": " + buf.status().message() +
                                               "; lower placement.gpu_layers or raise cpu_moe (`switchyard plan -P "
                                               "PIPELINE` shows what fits)");
      chunks[dv].push_back(buf->get());
      w.buffers_.push_back(std::move(*buf));
      w.buffer_device_.push_back(static_cast<int>(dv));
    }
  std::vector<std::byte> raw, converted;
  for (const auto& u : uploads) {
    const TensorDesc& d = descs[u.index];
    GraphTensor t = shaped(d);
    std::span<const std::byte> bytes;
    Buffer* buf = chunks[static_cast<size_t>(u.device)][u.chunk];
    auto view = src.view(u.index);
    if (view) {
      bytes = *view;
    } else {
      raw.resize(d.bytes);
      if (auto st = src.read(u.index, 0, raw); !st) return st;
      bytes = raw;
    }
    if (u.plan.action != convert::Action::native) {
      converted.resize(u.plan.bytes_after);
      if (auto st = convert::convert_rows(u.plan, bytes, t.ne[0], t.rows(), converted); !st)
        return Status(st.code(), d.name + ": " + st.message());
      bytes = converted;
      t.type = u.plan.to;
      graph::set_contiguous_strides(t);
    }
    if (u.repack) {
      // Straight into host-visible memory; through a staging copy otherwise.
      auto* host = static_cast<std::byte*>(buf->host_data());
      std::byte* out = host ? host + u.offset : nullptr;
      if (!out) {
        converted.resize(bytes.size());
        out = converted.data();
      }
      const StorageType to = interleaved_of(t.type);
      // Only the file's mapping is faulted in and released by chunks: a converted copy is not.
      const bool from_mapping = view && bytes.data() == view->data();
      if (auto st = repack_tensor(to, bytes, out, t.ne[0], t.rows(), from_mapping); !st)
        return Status(st.code(), d.name + ": " + st.message());
      t.type = to;
      w.repacked_bytes_ += bytes.size();
      if (view) release_pages(*view);
      bytes = {out, bytes.size()};
    }
    if (!(u.repack && buf->host_data()))
      if (auto st = buf->upload(static_cast<size_t>(u.offset), bytes); !st) return st;
    t.buffer = buf;
    t.offset = static_cast<size_t>(u.offset);
    t.data = buf->host_data() ? static_cast<std::byte*>(buf->host_data()) + u.offset : nullptr;
    if (u.device == where.host) lock(t.data, bytes.size());
    w.tensors_.emplace(d.name, t);
  }
  // Tensors every layer reads get a copy on each device that holds layers (llama.cpp's
  // TENSOR_DUPLICATED), so a layer's ops never read them across devices. They are small
  // (a rotation factor per pair) and not counted in placed().
  if (!where.tensor_device.empty())
    for (size_t i = 0; i < descs.size(); ++i) {
      if (descs[i].name != "rope_freqs.weight") continue;
      const GraphTensor* original = &w.tensors_.at(descs[i].name);
      std::vector<int> targets(where.tensor_device.begin(), where.tensor_device.end());
      std::sort(targets.begin(), targets.end());
      targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
      for (int dv : targets) {
        if (dv == w.device_of(*original)) continue;
        GraphTensor t = shaped(descs[i]);
        raw.resize(descs[i].bytes);
        if (auto st = src.read(i, 0, raw); !st) return st;
        auto buf = devices[static_cast<size_t>(dv)]->allocate(raw.size(), BufferKind::device_local);
        if (!buf) return buf.status();
        if (auto st = (*buf)->upload(0, raw); !st) return st;
        t.buffer = buf->get();
        t.data = (*buf)->host_data();
        w.buffers_.push_back(std::move(*buf));
        w.buffer_device_.push_back(dv);
        w.replicas_.push_back({original, dv, t});
      }
    }
  if (repack_declined)
    lg->info("weights kept in the file's layout, not repacked for the CPU's 16-row kernels: the host's {:.2f} GiB do "
             "not fit in 90% of the {:.2f} GiB available, and repacked copies could not be paged out",
             static_cast<double>(host_bytes) / (1u << 30), static_cast<double>(available) / (1u << 30));
  if (w.repacked_bytes_ > 0)
    lg->info("repacked {:.2f} GiB of Q4_K, Q6_K, Q4_0, Q8_0 and I4_G* weights into 16-row interleaved layouts for the CPU's kernels (same size; "
             "backends[cpu].repack: false keeps the file's layout)",
             static_cast<double>(w.repacked_bytes_) / (1u << 30));
  // Locked pages are already resident.
  if (!opts.mlock) w.prefaulted_bytes_ = prefault(mapped);
  // llama.cpp's behaviour: a failed lock is a warning, since the model still runs.
  if (lock_failed)
    lg->warn("model.mlock: could not lock the weights in RAM ({}; {} locked); raise the memlock limit (ulimit -l, "
             "or LimitMEMLOCK= for a service) or set model.mlock false",
             std::strerror(lock_errno), w.locked_bytes_);
  w.index_orders();
  return w;
}

Weights Weights::shapes_only(std::span<const TensorDesc> descs) {
  Weights w;
  for (const auto& d : descs) w.tensors_.emplace(d.name, shaped(d));
  w.index_orders();
  return w;
}

const GraphTensor* Weights::input_order(const GraphTensor* weight) const {
  const auto it = orders_.find(weight);
  return it == orders_.end() ? nullptr : it->second;
}

void Weights::index_orders() {
  // Built once, so that building a step's graph looks orders and scales up without
  // searching by name.
  static constexpr std::string_view kOrder = ".input_order";
  for (const auto& [name, t] : tensors_) names_[&t] = name;
  for (const auto& [name, t] : tensors_) {
    if (name.size() <= kOrder.size() || name.compare(name.size() - kOrder.size(), kOrder.size(), kOrder) != 0) continue;
    if (const GraphTensor* w = find(name.substr(0, name.size() - kOrder.size()) + ".weight")) orders_[w] = &t;
  }
  if (!static_activations_) return;
  for (const auto& [name, t] : tensors_) {
    std::vector<const GraphTensor*> found;
    for (const std::string& w : same_input_weights(name)) {
      if (w.size() <= 7) continue;
      if (const GraphTensor* sc = find(w.substr(0, w.size() - 7) + ".input_scale")) found.push_back(sc);
    }
    if (!found.empty()) scales_[&t] = std::move(found);
  }
}

std::vector<const GraphTensor*> Weights::input_scales(const GraphTensor* weight) const {
  const auto it = scales_.find(weight);
  return it == scales_.end() ? std::vector<const GraphTensor*>() : it->second;
}

std::string_view Weights::name_of(const GraphTensor* t) const {
  const auto it = names_.find(t);
  return it == names_.end() ? std::string_view() : std::string_view(it->second);
}

const GraphTensor* Weights::find(std::string_view name) const {
  auto it = tensors_.find(std::string(name));
  return it == tensors_.end() ? nullptr : &it->second;
}

const GraphTensor* Weights::on_device(const GraphTensor* t, int device) const {
  for (const auto& r : replicas_)
    if (r.original == t && r.device == device) return &r.copy;
  return t;
}

int Weights::device_of(const GraphTensor& t) const {
  if (t.buffer)
    for (size_t b = 0; b < buffers_.size(); ++b)
      if (buffers_[b].get() == t.buffer) return buffer_device_[b];
  return host_;  // mapped from the file
}

}  // namespace sy::model
