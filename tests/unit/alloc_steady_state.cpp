// Steady-state decode must not touch the heap: this program replaces the global operator
// new with a counting one (for the whole process, plugins included), warms the engine up,
// then counts allocations over 32 decode steps. Own executable, since the replacement is
// process-wide. Exit 0: none; 1: some (the count is printed).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "engine_support.hpp"
#include "support.hpp"
#include "synth/synth.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocs{0};
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
  const auto al = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
// The nothrow forms too: left to the default (or to ASan's), they would hand out memory
// that the free()-based deletes below then release with the wrong allocator.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return operator new(n, std::nothrow); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return operator new(n, a);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return operator new(n, a, std::nothrow);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

int main() {
  try {
    sy::test::TempDir dir;
    int failures = 0;
    for (const char* arch : {"demo", "demo-llama"}) {
      const auto path = dir / (std::string(arch) + ".gguf");
      if (auto st = sy::synth::write_demo_model(path, arch); !st) {
        std::fprintf(stderr, "cannot write the demo model: %s\n", st.message().c_str());
        return 1;
      }
      for (const char* kv : {"f16", "q8_0"}) {
        auto rt = sy::test::bring_up_model(path, {kv, 512, 2, 512});
        auto& e = *rt->engine;
        std::vector<int32_t> prompt{1, 20, 30, 40, 50, 60, 70, 80};
        (void)sy::test::greedy(e, 0, prompt, 4);  // warm-up: arenas and scratch reach their size
        std::vector<sy::engine::BatchToken> batch{{0, 5, true}};
        std::vector<float> logits;
        if (!e.decode(batch, logits)) return 1;
        g_allocs = 0;
        g_counting = true;
        bool ok = true;
        for (int step = 0; step < 32 && ok; ++step) {
          batch[0].id = sy::test::argmax(logits.data(), e.n_vocab());
          ok = e.decode(batch, logits).is_ok();
        }
        g_counting = false;
        std::printf("%s, kv %s: %ld heap allocations in 32 decode steps%s\n", arch, kv, g_allocs.load(),
                    ok ? "" : " (a decode failed)");
        if (!ok || g_allocs.load() != 0) ++failures;
      }
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "error: %s\n", ex.what());
    return 1;
  }
}
