#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "row_to_f32.hpp"
#include "switchyard/quant.hpp"

namespace sy::cpu {
namespace {

Status check(const AttentionArgs& a) {
  for (const KvRows* kv : {&a.k, &a.v})
    if (kv->type != StorageType::F32 && kv->type != StorageType::F16 && kv->type != StorageType::BF16 &&
        kv->type != StorageType::Q8_0 && kv->type != StorageType::Q4_0)
      return error::unsupported("cpu: attention: KV cache type " + std::string(storage_type_name(kv->type)) +
                                " is not supported (f32, f16, bf16, q8_0, q4_0)");
  if (a.k.dim != a.q.ne[0]) return error::invalid_argument("cpu: attention: query and key head sizes differ");
  if (a.k.n_kv_heads <= 0 || a.q.ne[1] % a.k.n_kv_heads != 0)
    return error::invalid_argument("cpu: attention: " + std::to_string(a.q.ne[1]) +
                                   " query heads are not a multiple of " + std::to_string(a.k.n_kv_heads) + " KV heads");
  if (a.q_pos.size() != static_cast<size_t>(a.q.ne[2]))
    return error::invalid_argument("cpu: attention: one position per query token is needed");
  if (a.out.ne[0] != a.v.dim || a.out.ne[1] != a.q.ne[1] || a.out.ne[2] != a.q.ne[2])
    return error::invalid_argument("cpu: attention: the output must be [v head size, heads, queries]");
  for (const KvRows* kv : {&a.k, &a.v})
    if (!kv->block_table.empty() &&
        (kv->block_size <= 0 || static_cast<int64_t>(kv->block_table.size()) * kv->block_size < kv->n_ctx))
      return error::invalid_argument("cpu: attention: the block table does not cover all " +
                                     std::to_string(kv->n_ctx) + " positions");
  return Status::ok();
}

struct Ctx {
  const AttentionArgs& a;
  DotKernel kdot;
  size_t k_row, v_row, q_act;
  const uint8_t* krow(int64_t pos, int64_t h) const {
    return static_cast<const uint8_t*>(a.k.data) + static_cast<size_t>(a.k.slot(pos) * a.k.n_kv_heads + h) * k_row;
  }
  const uint8_t* vrow(int64_t pos, int64_t h) const {
    return static_cast<const uint8_t*>(a.v.data) + static_cast<size_t>(a.v.slot(pos) * a.v.n_kv_heads + h) * v_row;
  }
};

Ctx make_ctx(const AttentionArgs& a, Isa isa) {
  Ctx c{a, dot_kernel(a.k.type, isa), 0, 0, 0};
  c.k_row = *storage_row_bytes(a.k.type, static_cast<uint64_t>(a.k.dim));
  c.v_row = *storage_row_bytes(a.v.type, static_cast<uint64_t>(a.v.dim));
  c.q_act = act_row_bytes(c.kdot, a.k.dim);
  return c;
}

// The query row gathered into tmp (already sized), contiguous as quantize_act reads it.
const float* query_row(const Ctx& c, int64_t qi, int64_t h, std::vector<float>& tmp) {
  for (int64_t i = 0; i < c.a.q.ne[0]; ++i) tmp[static_cast<size_t>(i)] = c.a.q.at(i, h, qi);
  return tmp.data();
}

// The query row as the K dot kernel wants it.
void query_act(const Ctx& c, int64_t qi, int64_t h, std::vector<float>& tmp, std::vector<uint8_t>& act) {
  tmp.resize(static_cast<size_t>(c.a.q.ne[0]));
  act.resize(c.q_act);
  c.kdot.quantize_act(c.a.q.ne[0], query_row(c, qi, h, tmp), act.data());
}

int64_t visible(const AttentionArgs& a, int64_t qi) {
  return std::min<int64_t>(a.k.n_ctx, static_cast<int64_t>(a.q_pos[static_cast<size_t>(qi)]) + 1);
}

}  // namespace

Status attention(const AttentionArgs& a, Isa isa, ThreadPool& pool) {
  AttentionScratch s;
  return attention(a, isa, pool, s);
}

Status attention(const AttentionArgs& a, Isa isa, ThreadPool& pool, AttentionScratch& scratch) {
  if (auto st = check(a); !st) return st;
  const Ctx c = make_ctx(a, isa);
  const int64_t n_q = a.q.ne[2], n_heads = a.q.ne[1], n_kv = a.k.n_kv_heads, group = n_heads / n_kv, dv = a.v.dim;
  constexpr int64_t kTile = 64;
  // About 64 (query, head) pairs per task: their accumulators and one V tile stay in L2.
  const int64_t q_block = std::max<int64_t>(1, 64 / group);
  const int64_t n_blocks = (n_q + q_block - 1) / q_block;
  // Too few tasks for the threads (decode): split each KV head's query heads.
  const int64_t want = 2 * static_cast<int64_t>(pool.size());
  const int64_t n_chunks = std::min(group, std::max<int64_t>(1, (want + n_blocks * n_kv - 1) / (n_blocks * n_kv)));
  const int64_t chunk = (group + n_chunks - 1) / n_chunks;
  const size_t pairs = static_cast<size_t>(q_block * chunk);
  if (scratch.threads.size() < static_cast<size_t>(pool.size())) scratch.threads.resize(static_cast<size_t>(pool.size()));
  // Sized here, on the calling thread: a worker must not allocate inside the task.
  for (auto& t : scratch.threads) {
    t.qf.resize(static_cast<size_t>(a.q.ne[0]));
    t.qa.resize(c.q_act * pairs);
    t.acc.resize(static_cast<size_t>(dv) * pairs);
    t.vtile.resize(static_cast<size_t>(dv * kTile));
    t.s.resize(kTile);
    t.m.resize(pairs);
    t.l.resize(pairs);
  }
  // Later query blocks see more keys: they go first so the short ones fill in at the end.
  pool.run(n_blocks * n_kv * n_chunks, [&](int64_t task, int thread) {
    const int64_t blk = n_blocks - 1 - task / (n_kv * n_chunks), kvh = task / n_chunks % n_kv;
    const int64_t q0 = blk * q_block, q1 = std::min(n_q, q0 + q_block);
    const int64_t h0 = kvh * group + task % n_chunks * chunk, h1 = std::min(kvh * group + group, h0 + chunk);
    if (h0 >= h1) return;
    const int64_t hc = h1 - h0;
    auto& sc = scratch.threads[static_cast<size_t>(thread)];
    int64_t n_max = 0;
    for (int64_t qi = q0; qi < q1; ++qi) {
      n_max = std::max(n_max, visible(a, qi));
      for (int64_t h = h0; h < h1; ++h) {
        const size_t pr = static_cast<size_t>((qi - q0) * hc + (h - h0));
        c.kdot.quantize_act(a.q.ne[0], query_row(c, qi, h, sc.qf), sc.qa.data() + pr * c.q_act);
        std::fill_n(sc.acc.data() + pr * static_cast<size_t>(dv), dv, 0.f);
        sc.m[pr] = -INFINITY;
        sc.l[pr] = 0;
      }
    }
    for (int64_t t0 = 0; t0 < n_max; t0 += kTile) {
      for (int64_t p = t0; p < std::min(n_max, t0 + kTile); ++p)
        row_to_f32(a.v.type, c.vrow(p, kvh), sc.vtile.data() + (p - t0) * dv, dv);
      for (int64_t qi = q0; qi < q1; ++qi) {
        const int64_t t1 = std::min(visible(a, qi), t0 + kTile);
        if (t1 <= t0) continue;
        for (int64_t h = h0; h < h1; ++h) {
          const size_t pr = static_cast<size_t>((qi - q0) * hc + (h - h0));
          const uint8_t* qa = sc.qa.data() + pr * c.q_act;
          float* acc = sc.acc.data() + pr * static_cast<size_t>(dv);
          float* s = sc.s.data();
          float tile_max = -INFINITY;
          for (int64_t p = t0; p < t1; ++p) {
            s[p - t0] = row_dot(c.kdot, a.k.dim, c.krow(p, kvh), qa) * a.scale;
            tile_max = std::max(tile_max, s[p - t0]);
          }
          // Online softmax: rescale what was accumulated when the running maximum grows.
          const float m_new = std::max(sc.m[pr], tile_max);
          const float corr = std::exp(sc.m[pr] - m_new);
          float l = sc.l[pr] * corr;
          for (int64_t j = 0; j < dv; ++j) acc[j] *= corr;
          for (int64_t p = t0; p < t1; ++p) {
            const float w = std::exp(s[p - t0] - m_new);
            l += w;
            const float* vr = sc.vtile.data() + (p - t0) * dv;
            for (int64_t j = 0; j < dv; ++j) acc[j] += w * vr[j];
          }
          sc.m[pr] = m_new;
          sc.l[pr] = l;
        }
      }
    }
    for (int64_t qi = q0; qi < q1; ++qi)
      for (int64_t h = h0; h < h1; ++h) {
        const size_t pr = static_cast<size_t>((qi - q0) * hc + (h - h0));
        const float* acc = sc.acc.data() + pr * static_cast<size_t>(dv);
        const float inv = sc.l[pr] > 0 ? 1.0f / sc.l[pr] : 0.0f;  // a query that sees no key yields zeros
        for (int64_t j = 0; j < dv; ++j) a.out.at(j, h, qi) = acc[j] * inv;
      }
  });
  return Status::ok();
}

Status attention_reference(const AttentionArgs& a) {
  if (auto st = check(a); !st) return st;
  const Ctx c = make_ctx(a, Isa::scalar);
  const int64_t n_heads = a.q.ne[1], group = n_heads / a.k.n_kv_heads, dv = a.v.dim;
  std::vector<float> qf, vrow(static_cast<size_t>(dv));
  std::vector<uint8_t> qa;
  for (int64_t qi = 0; qi < a.q.ne[2]; ++qi)
    for (int64_t h = 0; h < n_heads; ++h) {
      const int64_t kvh = h / group, n = visible(a, qi);
      query_act(c, qi, h, qf, qa);
      std::vector<double> s(static_cast<size_t>(n));
      double mx = -INFINITY, sum = 0;
      for (int64_t p = 0; p < n; ++p) {
        s[static_cast<size_t>(p)] = static_cast<double>(row_dot(c.kdot, a.k.dim, c.krow(p, kvh), qa.data())) * a.scale;
        mx = std::max(mx, s[static_cast<size_t>(p)]);
      }
      for (auto& v : s) sum += v = std::exp(v - mx);
      std::vector<double> acc(static_cast<size_t>(dv), 0.0);
      for (int64_t p = 0; p < n; ++p) {
        (void)dequantize_row(a.v.type, c.vrow(p, kvh), vrow.data(), dv);
        for (int64_t j = 0; j < dv; ++j) acc[static_cast<size_t>(j)] += s[static_cast<size_t>(p)] / sum * vrow[static_cast<size_t>(j)];
      }
      for (int64_t j = 0; j < dv; ++j) a.out.at(j, h, qi) = n > 0 ? static_cast<float>(acc[static_cast<size_t>(j)]) : 0.f;
    }
  return Status::ok();
}

}  // namespace sy::cpu
