// gguf_mutants MODEL OUTDIR COUNT SEED: writes COUNT damaged copies of a valid GGUF model,
// each with one change to its header, metadata or tensor infos, for the mutation test
// (tests/integration/gguf_mutations.sh): hyper-parameter integers set to 0, -1, huge or
// off by a little; a value's type id changed; keys duplicated, removed or given absurd
// lengths; counts of keys or tensors changed; the architecture renamed; tensor dimensions
// and types changed; the file truncated. The same seed gives the same files.
//
// The header is walked here from the GGUF specification (not with the project's reader),
// so the mutants do not inherit the reader's view of the format.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<uint8_t>;

struct Kv {
  size_t begin = 0, type_at = 0, value_at = 0, end = 0;  // byte offsets in the file
  std::string key;
  uint32_t type = 0;
};
struct Info {
  size_t begin = 0, dims_at = 0, type_at = 0, end = 0;
  std::string name;
  uint32_t n_dims = 0;
};

uint64_t rd(const Bytes& b, size_t at, size_t n) {
  uint64_t v = 0;
  if (at + n <= b.size()) std::memcpy(&v, b.data() + at, n);
  return v;
}
void wr(Bytes& b, size_t at, uint64_t v, size_t n) {
  if (at + n <= b.size()) std::memcpy(b.data() + at, &v, n);
}

size_t scalar_size(uint32_t t) {
  switch (t) {
    case 0: case 1: case 7: return 1;    // u8 i8 bool
    case 2: case 3: return 2;            // u16 i16
    case 4: case 5: case 6: return 4;    // u32 i32 f32
    case 10: case 11: case 12: return 8; // u64 i64 f64
    default: return 0;
  }
}

/// Offset just past a value of type t at `at` (arrays and strings walked), or 0 on damage.
size_t skip_value(const Bytes& b, size_t at, uint32_t t) {
  if (t == 8) return at + 8 + rd(b, at, 8);
  if (t == 9) {
    const auto et = static_cast<uint32_t>(rd(b, at, 4));
    const uint64_t n = rd(b, at + 4, 8);
    size_t p = at + 12;
    for (uint64_t i = 0; i < n && p < b.size(); ++i) p = skip_value(b, p, et);
    return p;
  }
  const size_t s = scalar_size(t);
  return s ? at + s : 0;
}

struct Header {
  uint64_t n_tensors = 0, n_kv = 0;
  std::vector<Kv> kv;
  std::vector<Info> infos;
};

Header walk(const Bytes& b) {
  Header h;
  h.n_tensors = rd(b, 8, 8);
  h.n_kv = rd(b, 16, 8);
  size_t p = 24;
  for (uint64_t i = 0; i < h.n_kv; ++i) {
    Kv k;
    k.begin = p;
    const uint64_t len = rd(b, p, 8);
    k.key.assign(reinterpret_cast<const char*>(b.data() + p + 8), len);
    k.type_at = p + 8 + len;
    k.type = static_cast<uint32_t>(rd(b, k.type_at, 4));
    k.value_at = k.type_at + 4;
    k.end = p = skip_value(b, k.value_at, k.type);
    h.kv.push_back(k);
  }
  for (uint64_t i = 0; i < h.n_tensors; ++i) {
    Info t;
    t.begin = p;
    const uint64_t len = rd(b, p, 8);
    t.name.assign(reinterpret_cast<const char*>(b.data() + p + 8), len);
    t.dims_at = p + 8 + len + 4;
    t.n_dims = static_cast<uint32_t>(rd(b, p + 8 + len, 4));
    t.type_at = t.dims_at + 8 * t.n_dims;
    t.end = p = t.type_at + 4 + 8;
    h.infos.push_back(t);
  }
  return h;
}

/// SplitMix64: the same sequence on every platform.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t pick(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
};

bool is_hparam_int(const Kv& k) {
  return k.key.rfind("general.", 0) != 0 && k.key.rfind("tokenizer.", 0) != 0 && scalar_size(k.type) && k.type != 6 &&
         k.type != 12 && k.type != 7;
}

/// After an edit that grew or shrank the header by `delta` bytes, moves the data section
/// back to an aligned start (32, the default), so the edit is all that changed.
Bytes realign(const Bytes& in, const Header& h, Bytes b, std::ptrdiff_t delta) {
  const size_t old_end = h.infos.empty() ? (h.kv.empty() ? 24 : h.kv.back().end) : h.infos.back().end;
  const size_t old_data = (old_end + 31) / 32 * 32;
  const auto new_end = static_cast<size_t>(static_cast<std::ptrdiff_t>(old_end) + delta);
  b.resize(new_end);
  b.resize((new_end + 31) / 32 * 32, 0);
  if (old_data < in.size()) b.insert(b.end(), in.begin() + static_cast<std::ptrdiff_t>(old_data), in.end());
  return b;
}

/// One mutation of `in`; `what` says which, for the test's log.
Bytes mutate(const Bytes& in, Rng& r, std::string& what) {
  Bytes b = in;
  const Header h = walk(b);
  std::vector<const Kv*> ints;
  for (const auto& k : h.kv)
    if (is_hparam_int(k)) ints.push_back(&k);
  switch (r.pick(12)) {
    case 0: case 1: case 2: {  // a hyper-parameter integer set to an edge value, keeping its type
      const Kv& k = *ints[r.pick(ints.size())];
      const size_t n = scalar_size(k.type);
      const uint64_t old = rd(b, k.value_at, n);
      const uint64_t choices[] = {0, ~0ull, 0x7fffffffull, 0x80000000ull, 1000000000ull, old + 1, old * 2, old / 2 + 1};
      const uint64_t v = choices[r.pick(std::size(choices))];
      wr(b, k.value_at, v, n);
      what = k.key + " = " + std::to_string(v & (n == 8 ? ~0ull : ((1ull << (8 * n)) - 1)));
      break;
    }
    case 3: {  // a value's type id changed: the reader sees other bytes as the value
      const Kv& k = h.kv[r.pick(h.kv.size())];
      const uint32_t types[] = {0, 4, 5, 6, 7, 8, 9, 10, 12, 13, 0xffffffffu};
      const uint32_t t = types[r.pick(std::size(types))];
      wr(b, k.type_at, t, 4);
      what = k.key + " type " + std::to_string(k.type) + " -> " + std::to_string(t);
      break;
    }
    case 4: {  // a key duplicated
      const Kv& k = h.kv[r.pick(h.kv.size())];
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(k.end), in.begin() + static_cast<std::ptrdiff_t>(k.begin),
               in.begin() + static_cast<std::ptrdiff_t>(k.end));
      wr(b, 16, h.n_kv + 1, 8);
      b = realign(in, h, std::move(b), static_cast<std::ptrdiff_t>(k.end - k.begin));
      what = "duplicate " + k.key;
      break;
    }
    case 5: {  // a key removed
      const Kv& k = h.kv[r.pick(h.kv.size())];
      b.erase(b.begin() + static_cast<std::ptrdiff_t>(k.begin), b.begin() + static_cast<std::ptrdiff_t>(k.end));
      wr(b, 16, h.n_kv - 1, 8);
      b = realign(in, h, std::move(b), -static_cast<std::ptrdiff_t>(k.end - k.begin));
      what = "remove " + k.key;
      break;
    }
    case 6: {  // key or tensor counts changed
      const uint64_t v[] = {0, 1, h.n_kv + 1, h.n_kv - 1, ~0ull, 1ull << 40};
      const size_t at = r.pick(2) ? 16 : 8;
      const uint64_t x = v[r.pick(std::size(v))];
      wr(b, at, x, 8);
      what = std::string(at == 16 ? "n_kv" : "n_tensors") + " = " + std::to_string(x);
      break;
    }
    case 7: {  // a string length made absurd
      const Kv& k = h.kv[r.pick(h.kv.size())];
      const uint64_t v[] = {~0ull, 1ull << 62, rd(b, k.begin, 8) + 1000};
      const uint64_t x = v[r.pick(std::size(v))];
      wr(b, k.begin, x, 8);
      what = "key length of " + k.key + " = " + std::to_string(x);
      break;
    }
    case 8: {  // the architecture renamed: another architecture's keys are all missing
      const char* names[] = {"llama", "qwen2", "qwen3", "qwen3moe", "qwen2moe", "qwen35moe", "deepseek2", "gpt2", ""};
      const std::string name = names[r.pick(std::size(names))];
      for (const auto& k : h.kv)
        if (k.key == "general.architecture" && k.type == 8) {
          Bytes v(8);
          wr(v, 0, name.size(), 8);
          v.insert(v.end(), name.begin(), name.end());
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(k.value_at), b.begin() + static_cast<std::ptrdiff_t>(k.end));
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(k.value_at), v.begin(), v.end());
          b = realign(in, h, std::move(b),
                      static_cast<std::ptrdiff_t>(v.size()) - static_cast<std::ptrdiff_t>(k.end - k.value_at));
        }
      what = "general.architecture = '" + name + "'";
      break;
    }
    case 9: {  // a tensor dimension changed
      const Info& t = h.infos[r.pick(h.infos.size())];
      const size_t d = r.pick(t.n_dims);
      const uint64_t old = rd(b, t.dims_at + 8 * d, 8);
      const uint64_t v[] = {0, 1, old / 2, old * 2, old + 32, ~0ull, 1ull << 31};
      const uint64_t x = v[r.pick(std::size(v))];
      wr(b, t.dims_at + 8 * d, x, 8);
      what = t.name + " dim " + std::to_string(d) + " = " + std::to_string(x);
      break;
    }
    case 10: {  // a tensor's storage type changed
      const Info& t = h.infos[r.pick(h.infos.size())];
      const uint32_t types[] = {0, 1, 2, 8, 12, 14, 30, 41, 1000};
      const uint32_t x = types[r.pick(std::size(types))];
      wr(b, t.type_at, x, 4);
      what = t.name + " type = " + std::to_string(x);
      break;
    }
    default: {  // truncated: in the metadata, the tensor infos or the data
      const size_t meta_end = h.kv.empty() ? 24 : h.kv.back().end;
      const size_t infos_end = h.infos.empty() ? meta_end : h.infos.back().end;
      const size_t cuts[] = {r.pick(meta_end), meta_end + r.pick(infos_end - meta_end + 1),
                             infos_end + r.pick(in.size() - infos_end)};
      const size_t at = cuts[r.pick(std::size(cuts))];
      b.resize(at);
      what = "truncated at " + std::to_string(at) + " of " + std::to_string(in.size());
      break;
    }
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: gguf_mutants MODEL OUTDIR COUNT SEED\n";
    return 2;
  }
  std::ifstream f(argv[1], std::ios::binary);
  const Bytes in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (in.size() < 24 || std::memcmp(in.data(), "GGUF", 4) != 0) {
    std::cerr << "gguf_mutants: " << argv[1] << " is not a GGUF file\n";
    return 1;
  }
  const int count = std::stoi(argv[3]);
  Rng r{std::stoull(argv[4])};
  for (int i = 0; i < count; ++i) {
    std::string what;
    const Bytes b = mutate(in, r, what);
    char name[32];
    std::snprintf(name, sizeof name, "/m%03d.gguf", i);
    std::ofstream o(std::string(argv[2]) + name, std::ios::binary);
    o.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    std::cout << "m" << i << ": " << what << "\n";
  }
  return 0;
}
