// The CUDA backend's bookkeeping that runs on the host (backends/cuda/host): the pinned
// staging ring and the CUDA-graph cache. No GPU or toolkit needed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "host/graph_cache.hpp"
#include "host/staging_ring.hpp"

using sy::cuda::GraphCache;
using sy::cuda::StagingRing;

namespace {

// Two spans overlap when both are in flight: the ring's whole promise.
bool overlaps(size_t a, size_t an, size_t b, size_t bn) { return a < b + bn && b < a + an; }

}  // namespace

TEST_CASE("staging ring: aligned spans, never overlapping what is in flight", "[cuda][host]") {
  StagingRing ring(4096);
  auto a = ring.acquire(1000);
  auto b = ring.acquire(1000);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*a % 256 == 0);
  CHECK(*b % 256 == 0);
  CHECK_FALSE(overlaps(*a, 1000, *b, 1000));
  ring.tag(1);
  auto c = ring.acquire(1000);
  REQUIRE(c);
  CHECK_FALSE(overlaps(*c, 1000, *a, 1000));
  CHECK_FALSE(overlaps(*c, 1000, *b, 1000));
  ring.tag(2);
  // a, b and c (about 3 KiB with padding) in flight: a fourth 1000-byte span fits, a fifth does not.
  auto d = ring.acquire(1000);
  REQUIRE(d);
  ring.tag(3);
  CHECK_FALSE(ring.acquire(1000));
  CHECK(ring.oldest_event() == 1);
  ring.retire(1);  // a and b are free again
  CHECK(ring.oldest_event() == 2);
  auto e = ring.acquire(1500);
  REQUIRE(e);
  CHECK_FALSE(overlaps(*e, 1500, *c, 1000));
  CHECK_FALSE(overlaps(*e, 1500, *d, 1000));
}

TEST_CASE("staging ring: a span that would cross the end starts over at offset 0", "[cuda][host]") {
  StagingRing ring(4096);
  REQUIRE(ring.acquire(3000) == 0u);
  ring.tag(1);
  ring.retire(0);  // nothing completed yet
  CHECK_FALSE(ring.acquire(1500));  // 3072..4096 is too short and 0..3000 is in flight
  ring.retire(1);
  auto x = ring.acquire(1500);
  REQUIRE(x);
  CHECK(*x == 0u);  // nothing in flight: the ring starts over at the front
  ring.tag(2);
  auto y = ring.acquire(2000);  // after x, aligned: 1536
  REQUIRE(y);
  CHECK(*y == 1536u);
  ring.tag(3);
  ring.retire(2);
  auto z = ring.acquire(1000);  // 3536 rounds to 3584, 3584 + 1000 > 4096: wraps to 0 (free since event 2)
  REQUIRE(z);
  CHECK(*z == 0u);
  CHECK_FALSE(overlaps(*z, 1000, *y, 2000));
}

TEST_CASE("staging ring: too large never fits, and untagged spans wait for a tag", "[cuda][host]") {
  StagingRing ring(1024);
  CHECK_FALSE(ring.fits(1024));
  CHECK_FALSE(ring.acquire(1024));
  REQUIRE(ring.acquire(500));
  CHECK(ring.oldest_event() == 0);  // in flight but not tagged: the caller records an event
  ring.retire(100);                 // an untagged span is not freed by any completion
  CHECK(ring.in_flight() > 0);
  ring.tag(7);
  ring.retire(6);
  CHECK(ring.in_flight() > 0);
  ring.retire(7);
  CHECK(ring.in_flight() == 0);
}

TEST_CASE("staging ring: a long random-free sequence of copies never overlaps live bytes", "[cuda][host]") {
  // A fixed pattern of sizes (no random seed): acquire, tag each, retire with a lag of 3.
  StagingRing ring(1 << 16);
  struct Live {
    size_t off, n;
    uint64_t ev;
  };
  std::vector<Live> live;
  uint64_t ev = 0;
  for (int i = 0; i < 2000; ++i) {
    const size_t n = 1 + static_cast<size_t>((i * 7919) % 9000);
    auto off = ring.acquire(n);
    while (!off) {
      const uint64_t oldest = ring.oldest_event();
      REQUIRE(oldest != 0);
      ring.retire(oldest);
      live.erase(std::remove_if(live.begin(), live.end(), [&](const Live& l) { return l.ev <= oldest; }), live.end());
      off = ring.acquire(n);
    }
    REQUIRE(*off + n <= ring.capacity());
    for (const auto& l : live) REQUIRE_FALSE(overlaps(*off, n, l.off, l.n));
    ring.tag(++ev);
    live.push_back({*off, n, ev});
    if (ev > 3) {
      ring.retire(ev - 3);
      live.erase(std::remove_if(live.begin(), live.end(), [&](const Live& l) { return l.ev <= ev - 3; }), live.end());
    }
  }
}

TEST_CASE("graph cache: eager until the warm-up, then capture once, then replay", "[cuda][host]") {
  GraphCache g(2, 4);
  int h = 0;
  CHECK(g.decide(11, 5) == GraphCache::Action::eager);
  CHECK(g.decide(11, 5) == GraphCache::Action::capture);
  CHECK(g.store(11, 5, &h).empty());
  CHECK(g.handle(11) == &h);
  CHECK(g.decide(11, 5) == GraphCache::Action::replay);
  CHECK(g.decide(11, 5) == GraphCache::Action::replay);
  CHECK(g.replays() == 2);
  CHECK(g.captures() == 1);
  // The same key with another node count is another sub-graph: never replayed.
  CHECK(g.decide(11, 6) == GraphCache::Action::eager);
  CHECK(g.decide(11, 5) == GraphCache::Action::replay);
}

TEST_CASE("graph cache: the least recently used graph goes, and its handle comes back", "[cuda][host]") {
  GraphCache g(1, 2);
  int a = 0, b = 0, c = 0;
  REQUIRE(g.decide(1, 3) == GraphCache::Action::capture);
  CHECK(g.store(1, 3, &a).empty());
  REQUIRE(g.decide(2, 3) == GraphCache::Action::capture);
  CHECK(g.store(2, 3, &b).empty());
  CHECK(g.decide(1, 3) == GraphCache::Action::replay);  // 1 is now the more recent
  REQUIRE(g.decide(3, 3) == GraphCache::Action::capture);
  const auto evicted = g.store(3, 3, &c);
  REQUIRE(evicted.size() == 1);
  CHECK(evicted[0] == &b);
  CHECK(g.size() == 2);
  CHECK(g.decide(2, 3) == GraphCache::Action::capture);  // forgotten: captured again
  const auto all = g.clear();
  CHECK(std::set<void*>(all.begin(), all.end()) == std::set<void*>{&a, &c});
  CHECK(g.size() == 0);
}

TEST_CASE("graph cache: a graph it did not ask for is handed back, and off means eager", "[cuda][host]") {
  GraphCache g(2, 4);
  int x = 0;
  const auto back = g.store(5, 1, &x);
  REQUIRE(back.size() == 1);
  CHECK(back[0] == &x);
  GraphCache off(2, 0);
  for (int i = 0; i < 5; ++i) CHECK(off.decide(9, 1) == GraphCache::Action::eager);
}

TEST_CASE("graph cache: shapes seen once (prefill) do not pile up", "[cuda][host]") {
  GraphCache g(2, 4);
  int h = 0;
  REQUIRE(g.decide(1, 1) == GraphCache::Action::eager);
  REQUIRE(g.decide(1, 1) == GraphCache::Action::capture);
  g.store(1, 1, &h);
  for (uint64_t k = 100; k < 100 + 5000; ++k) CHECK(g.decide(k, 2) == GraphCache::Action::eager);
  CHECK(g.decide(1, 1) == GraphCache::Action::replay);  // the held graph survived the flood
  CHECK(g.size() == 1);
}
