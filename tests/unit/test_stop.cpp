// Stop strings across token boundaries: nothing that could still become a stop string is
// shown early, and the output ends right before the stop string.
#include <catch2/catch.hpp>

#include "engine/stop.hpp"

using sy::engine::StopMatcher;

TEST_CASE("stop strings are found across token boundaries and never shown", "[stop]") {
  StopMatcher m({"</end>", "STOP"});
  std::string shown;
  for (const char* piece : {"Hello ", "wor", "ld</", "en"}) {
    shown += m.push(piece);
    CHECK_FALSE(m.stopped());
  }
  CHECK(shown == "Hello world");  // "</en" is held back: it may become "</end>"
  shown += m.push("d> more");
  CHECK(m.stopped());
  CHECK(shown == "Hello world");
  CHECK(m.push("ignored").empty());
}

TEST_CASE("held-back text is released when it stops matching, or at the end", "[stop]") {
  StopMatcher m({"STOP"});
  CHECK(m.push("abc ST") == "abc ");
  CHECK(m.push("ART") == "START");  // "ST" + "ART" cannot become "STOP"
  CHECK(m.push("x S") == "x ");
  CHECK(m.flush() == "S");
  CHECK_FALSE(m.stopped());
  StopMatcher none({});
  CHECK(none.push("all of it") == "all of it");
}
