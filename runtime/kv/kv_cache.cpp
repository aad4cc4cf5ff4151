#include "kv/kv_cache.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "graph/graph.hpp"

namespace sy::kv {
namespace {

Result<std::unique_ptr<Buffer>> zeroed(Device& d, size_t bytes) {
  auto b = d.allocate(std::max<size_t>(bytes, 64), BufferKind::device_local);
  if (!b) return b.status();
  if (void* p = (*b)->host_data()) {
    std::memset(p, 0, (*b)->size());
  } else {
    std::vector<std::byte> z((*b)->size());
    if (auto st = (*b)->upload(0, z); !st) return st;
  }
  return b;
}

// Copies `bytes` bytes within one buffer.
Status move_bytes(Buffer& b, size_t from, size_t to, size_t bytes) {
  if (auto* p = static_cast<std::byte*>(b.host_data())) {
    std::memmove(p + to, p + from, bytes);
    return Status::ok();
  }
  std::vector<std::byte> tmp(bytes);
  if (auto st = b.download(from, tmp); !st) return st;
  return b.upload(to, tmp);
}

}  // namespace

Result<std::unique_ptr<KvCache>> KvCache::create(const model::HParams& hp, std::span<Device* const> devices,
                                                 std::span<const int> layer_device, const KvConfig& cfg) {
  if (cfg.n_ctx < 1 || cfg.n_seq_max < 1 || cfg.block_size < 1 || cfg.n_blocks < 0 || cfg.n_state_checkpoints < 0)
    return error::invalid_argument("context length, parallel sequences and block size must be positive");
  const auto& ti = storage_type_info(cfg.type);
  for (int64_t hd : {hp.head_dim_k, hp.head_dim_v})
    if (hd % ti.block_size != 0)
      return error::invalid_argument("context.kv_type " + std::string(storage_type_name(cfg.type)) +
                                     " stores heads in blocks of " + std::to_string(ti.block_size) +
                                     " values, but this model's head size is " + std::to_string(hd) +
                                     "; use kv_type f16 for it");
  std::unique_ptr<KvCache> c(new KvCache());
  c->cfg_ = cfg;
  c->kv_bytes_.assign(devices.size(), 0);
  c->state_bytes_.assign(devices.size(), 0);
  c->max_blocks_ = (cfg.n_ctx + cfg.block_size - 1) / cfg.block_size;
  const int64_t n_blocks = cfg.n_blocks > 0 ? cfg.n_blocks : c->max_blocks_ * cfg.n_seq_max;
  const int64_t state_rows = cfg.n_seq_max + cfg.n_state_checkpoints;
  const int64_t cells = n_blocks * cfg.block_size;
  int dev = 0;  // the layer being allocated
  auto make = [&](StorageType type, int64_t ne0, int64_t ne1, int64_t ne2, std::vector<GraphTensor>& out,
                  std::vector<uint64_t>& bytes) -> Status {
    GraphTensor t;
    t.type = type;
    t.ne[0] = ne0, t.ne[1] = ne1, t.ne[2] = ne2;
    graph::set_contiguous_strides(t);
    const auto n = static_cast<size_t>(t.nb[3] * t.ne[3]);
    auto b = zeroed(*devices[static_cast<size_t>(dev)], n);
    if (!b)
      return Status(b.status().code(), "allocating the KV cache on " + devices[static_cast<size_t>(dev)]->info().name +
                                           ": " + b.status().message() +
                                           "; lower context.length, use kv_type q8_0, or place fewer layers there");
    bytes[static_cast<size_t>(dev)] += n;
    t.buffer = b->get();
    t.data = (*b)->host_data();
    c->buffers_.push_back(std::move(*b));
    out.push_back(t);
    return Status::ok();
  };
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    dev = layer_device.empty() ? 0 : layer_device[static_cast<size_t>(il)];
    if (hp.is_full_attention(il)) {
      if (auto st = make(cfg.type, hp.head_dim_k, hp.n_head_kv, cells, c->k_, c->kv_bytes_); !st) return st;
      if (auto st = make(cfg.type, hp.head_dim_v, hp.n_head_kv, cells, c->v_, c->kv_bytes_); !st) return st;
      c->bytes_per_token_ += static_cast<uint64_t>(c->k_.back().nb[2] + c->v_.back().nb[2]);
      c->kv_device_.push_back(dev);
    } else {
      if (auto st = make(StorageType::F32, hp.conv_state_floats(), state_rows, 1, c->conv_, c->state_bytes_); !st)
        return st;
      if (auto st = make(StorageType::F32, hp.delta_state_floats(), state_rows, 1, c->delta_, c->state_bytes_); !st)
        return st;
      c->state_device_.push_back(dev);
    }
  }
  c->tables_.assign(static_cast<size_t>(cfg.n_seq_max * c->max_blocks_), 0);
  c->seq_of_row_.assign(static_cast<size_t>(cfg.n_seq_max), -1);
  c->length_.assign(static_cast<size_t>(cfg.n_seq_max), 0);
  c->refs_.assign(static_cast<size_t>(n_blocks), 0);
  for (int64_t b = n_blocks - 1; b >= 0; --b) c->free_.push_back(static_cast<int32_t>(b));
  return c;
}

int32_t KvCache::row(int32_t seq) const {
  for (size_t r = 0; r < seq_of_row_.size(); ++r)
    if (seq_of_row_[r] == seq) return static_cast<int32_t>(r);
  return -1;
}

int64_t KvCache::length(int32_t seq) const {
  const int32_t r = row(seq);
  return r < 0 ? -1 : length_[static_cast<size_t>(r)];
}

Status KvCache::zero_state(int32_t r) {
  for (auto* set : {&conv_, &delta_})
    for (const auto& t : *set) {
      const auto bytes = static_cast<size_t>(t.nb[1]);
      if (auto* p = static_cast<std::byte*>(t.data)) {
        std::memset(p + static_cast<size_t>(r) * bytes, 0, bytes);
      } else {
        std::vector<std::byte> z(bytes);
        if (auto st = t.buffer->upload(static_cast<size_t>(r) * bytes, z); !st) return st;
      }
    }
  return Status::ok();
}

Status KvCache::add(int32_t seq) {
  if (seq < 0) return error::invalid_argument("sequence ids must not be negative");
  if (row(seq) >= 0) return error::invalid_argument("sequence " + std::to_string(seq) + " already exists");
  const int32_t r = row(-1);
  if (r < 0)
    return error::resource_exhausted("all " + std::to_string(cfg_.n_seq_max) +
                                     " sequence slots are in use; raise context.parallel");
  seq_of_row_[static_cast<size_t>(r)] = seq;
  length_[static_cast<size_t>(r)] = 0;
  return zero_state(r);
}

void KvCache::release_blocks(int32_t r) {
  const int64_t used = (length_[static_cast<size_t>(r)] + cfg_.block_size - 1) / cfg_.block_size;
  for (int64_t i = 0; i < used; ++i) release(tables_[static_cast<size_t>(r * max_blocks_ + i)]);
  length_[static_cast<size_t>(r)] = 0;
}

Status KvCache::remove(int32_t seq) {
  const int32_t r = row(seq);
  if (r < 0) return error::not_found("sequence " + std::to_string(seq) + " does not exist");
  release_blocks(r);
  seq_of_row_[static_cast<size_t>(r)] = -1;
  return Status::ok();
}

Status KvCache::copy_block(int32_t from, int32_t to) {
  for (auto* set : {&k_, &v_})
    for (const auto& t : *set) {
      const auto bytes = static_cast<size_t>(t.nb[2] * cfg_.block_size);
      if (auto st = move_bytes(*t.buffer, static_cast<size_t>(from) * bytes, static_cast<size_t>(to) * bytes, bytes); !st)
        return st;
    }
  return Status::ok();
}

Status KvCache::copy_state(int32_t from_row, int32_t to_row) {
  for (auto* set : {&conv_, &delta_})
    for (const auto& t : *set) {
      const auto bytes = static_cast<size_t>(t.nb[1]);
      if (auto st = move_bytes(*t.buffer, static_cast<size_t>(from_row) * bytes, static_cast<size_t>(to_row) * bytes, bytes);
          !st)
        return st;
    }
  return Status::ok();
}

Status KvCache::fork(int32_t src, int32_t dst) {
  const int32_t rs = row(src);
  if (rs < 0) return error::not_found("sequence " + std::to_string(src) + " does not exist");
  const int64_t len = length_[static_cast<size_t>(rs)];
  const bool partial = len % cfg_.block_size != 0;
  if (partial && free_.empty()) return error::resource_exhausted("the KV cache has no free block to fork into");
  if (auto st = add(dst); !st) return st;
  const int32_t rd = row(dst);
  const int64_t used = (len + cfg_.block_size - 1) / cfg_.block_size;
  for (int64_t i = 0; i < used; ++i) {
    int32_t b = tables_[static_cast<size_t>(rs * max_blocks_ + i)];
    if (i == used - 1 && partial) {
      const int32_t nb = free_.back();
      free_.pop_back();
      if (auto st = copy_block(b, nb); !st) return st;
      b = nb;
    }
    ++refs_[static_cast<size_t>(b)];
    tables_[static_cast<size_t>(rd * max_blocks_ + i)] = b;
  }
  length_[static_cast<size_t>(rd)] = len;
  return copy_state(rs, rd);
}

Status KvCache::extend(int32_t seq, int64_t n, int32_t* cells) {
  const int32_t r = row(seq);
  if (r < 0) return error::not_found("sequence " + std::to_string(seq) + " does not exist");
  const int64_t len = length_[static_cast<size_t>(r)];
  if (len + n > cfg_.n_ctx)
    return error::out_of_range("sequence " + std::to_string(seq) + " would hold " + std::to_string(len + n) +
                               " tokens, but the context length is " + std::to_string(cfg_.n_ctx) +
                               "; raise context.length (or shorten the prompt or -n)");
  const int64_t have = (len + cfg_.block_size - 1) / cfg_.block_size;
  const int64_t need = (len + n + cfg_.block_size - 1) / cfg_.block_size;
  // Writing into a partly filled block another sequence (or a cache) also holds needs a copy.
  const bool cow = n > 0 && len % cfg_.block_size != 0 &&
                   refs_[static_cast<size_t>(tables_[static_cast<size_t>(r * max_blocks_ + have - 1)])] > 1;
  if (need - have + (cow ? 1 : 0) > static_cast<int64_t>(free_.size()))
    return error::resource_exhausted("the KV cache has no free blocks left for sequence " + std::to_string(seq));
  if (cow)
    if (auto st = unshare(r, have - 1); !st) return st;
  for (int64_t i = have; i < need; ++i) {
    const int32_t b = free_.back();
    free_.pop_back();
    refs_[static_cast<size_t>(b)] = 1;
    tables_[static_cast<size_t>(r * max_blocks_ + i)] = b;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = len + i;
    cells[i] = static_cast<int32_t>(tables_[static_cast<size_t>(r * max_blocks_ + p / cfg_.block_size)] * cfg_.block_size +
                                    p % cfg_.block_size);
  }
  length_[static_cast<size_t>(r)] = len + n;
  return Status::ok();
}

Status KvCache::unshare(int32_t r, int64_t i) {
  int32_t& slot = tables_[static_cast<size_t>(r * max_blocks_ + i)];
  const int32_t nb = free_.back();
  if (auto st = copy_block(slot, nb); !st) return st;
  free_.pop_back();
  refs_[static_cast<size_t>(nb)] = 1;
  --refs_[static_cast<size_t>(slot)];
  slot = nb;
  return Status::ok();
}

Status KvCache::truncate(int32_t seq, int64_t len, bool state_unchanged) {
  const int32_t r = row(seq);
  if (r < 0) return error::not_found("sequence " + std::to_string(seq) + " does not exist");
  const auto ru = static_cast<size_t>(r);
  if (len < 0 || len > length_[ru])
    return error::out_of_range("sequence " + std::to_string(seq) + " holds " + std::to_string(length_[ru]) +
                               " positions; it cannot be cut to " + std::to_string(len));
  if (len == length_[ru]) return Status::ok();
  if (has_state() && len != 0 && !state_unchanged)
    return error::invalid_argument("sequence " + std::to_string(seq) +
                                      " has recurrent state, which cannot be rewound to position " + std::to_string(len) +
                                      "; restore a saved state instead");
  const int64_t keep = (len + cfg_.block_size - 1) / cfg_.block_size;
  const int64_t used = (length_[ru] + cfg_.block_size - 1) / cfg_.block_size;
  for (int64_t i = keep; i < used; ++i) release(tables_[static_cast<size_t>(r * max_blocks_ + i)]);
  length_[ru] = len;
  return len == 0 ? zero_state(r) : Status::ok();
}

std::span<const int32_t> KvCache::blocks(int32_t seq) const {
  const int32_t r = row(seq);
  if (r < 0) return {};
  const int64_t used = (length_[static_cast<size_t>(r)] + cfg_.block_size - 1) / cfg_.block_size;
  return {tables_.data() + static_cast<size_t>(r * max_blocks_), static_cast<size_t>(used)};
}

Status KvCache::attach(int32_t seq, std::span<const int32_t> blocks) {
  const int32_t r = row(seq);
  if (r < 0) return error::not_found("sequence " + std::to_string(seq) + " does not exist");
  if (length_[static_cast<size_t>(r)] != 0)
    return error::invalid_argument("sequence " + std::to_string(seq) + " is not empty; only an empty one takes a prefix");
  const auto n = static_cast<int64_t>(blocks.size());
  if (n * cfg_.block_size > cfg_.n_ctx)
    return error::out_of_range("a prefix of " + std::to_string(n * cfg_.block_size) + " positions exceeds the context length " +
                               std::to_string(cfg_.n_ctx));
  for (int64_t i = 0; i < n; ++i) {
    const int32_t b = blocks[static_cast<size_t>(i)];
    if (b < 0 || b >= total_blocks() || refs_[static_cast<size_t>(b)] < 1)
      return error::invalid_argument("block " + std::to_string(b) + " is not a live block of the KV cache");
  }
  for (int64_t i = 0; i < n; ++i) {
    retain(blocks[static_cast<size_t>(i)]);
    tables_[static_cast<size_t>(r * max_blocks_ + i)] = blocks[static_cast<size_t>(i)];
  }
  length_[static_cast<size_t>(r)] = n * cfg_.block_size;
  return Status::ok();
}

void KvCache::retain(int32_t block) { ++refs_[static_cast<size_t>(block)]; }

void KvCache::release(int32_t block) {
  if (--refs_[static_cast<size_t>(block)] == 0) free_.push_back(block);
}

Status KvCache::save_state(int32_t seq, int64_t slot) {
  const int32_t r = row(seq);
  if (r < 0) return error::not_found("sequence " + std::to_string(seq) + " does not exist");
  if (slot < 0 || slot >= cfg_.n_state_checkpoints)
    return error::out_of_range("state checkpoint " + std::to_string(slot) + " does not exist");
  return copy_state(r, static_cast<int32_t>(cfg_.n_seq_max + slot));
}

Status KvCache::load_state(int64_t slot, int32_t seq) {
  const int32_t r = row(seq);
  if (r < 0) return error::not_found("sequence " + std::to_string(seq) + " does not exist");
  if (slot < 0 || slot >= cfg_.n_state_checkpoints)
    return error::out_of_range("state checkpoint " + std::to_string(slot) + " does not exist");
  return copy_state(static_cast<int32_t>(cfg_.n_seq_max + slot), r);
}

}  // namespace sy::kv
