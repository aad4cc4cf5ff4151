// model::prefault: the union of the ranges, page-rounded, is what gets prefaulted.
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include "model/prefault.hpp"

using namespace sy;

TEST_CASE("prefault fills the page-rounded union of the ranges once", "[model]") {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = 16 * page;
  void* m = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(m != MAP_FAILED);
  const auto* base = static_cast<const std::byte*>(m);
  // Pages 1-3 (a range inside page 1 and one spanning 2-3, overlapping it), and page 8.
  const std::vector<model::MappedRange> ranges{
      {base + page + 10, 100}, {base + page + 200, 2 * page}, {base + 8 * page + 1, 1}, {base + 5 * page, 0}};
  const uint64_t done = model::prefault(ranges);
#ifdef MADV_POPULATE_READ
  // A kernel before 5.14 refuses the advice: then nothing is prefaulted, which is allowed.
  const bool supported = madvise(m, page, MADV_POPULATE_READ) == 0;
  CHECK(done == (supported ? 4 * page : 0));
#else
  CHECK(done == 0);
#endif
  CHECK(model::prefault({}) == 0);
  munmap(m, bytes);
}
