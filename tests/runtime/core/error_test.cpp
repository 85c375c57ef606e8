// The call stack of an error (identical consecutive frames collapse, the outermost call is always kept), and which
// errors in flight say a state has probability zero.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <stdexcept>

#include "runtime/core/diagnostics.hpp"

namespace vnt::error_tests {
namespace {

std::string frames_of(const Error& e) {
  std::string out = render_error(e);
  return out.substr(out.find('\n') + 1);
}

TEST_CASE("repeated frames collapse into one line with a count") {
  Error e(ErrorKind::kInference, "deep");
  for (int i = 0; i < 7; ++i) e.add_frame("in call to 'f' at m.vnt:1:20");
  e.add_frame("in call to 'f' at m.vnt:2:10");
  CHECK(frames_of(e) ==
        "  in call to 'f' at m.vnt:1:20 (repeated 7 times)\n"
        "  in call to 'f' at m.vnt:2:10\n");
}

TEST_CASE("past kMaxFrames the outermost frame stays last and the others are counted") {
  Error e(ErrorKind::kInference, "deep");
  for (int i = 0; i < 20; ++i) e.add_frame(i % 2 == 0 ? "in call to 'g'" : "in call to 'h'");
  e.add_frame("in call to 'main'");
  REQUIRE(e.frames().size() == Error::kMaxFrames);
  CHECK(e.frames().back().text == "in call to 'main'");
  CHECK(e.frames()[Error::kMaxFrames - 2].text == "in call to 'g'");
  CHECK(e.omitted_frames() == 21 - Error::kMaxFrames);
  CHECK(frames_of(e).find("  ... 13 more calls\n  in call to 'main'\n") != std::string::npos);
}

template <class E>
bool caught_as_impossibility(E thrown) {
  try {
    throw thrown;
  } catch (...) {
    return impossibility_in_flight();
  }
}

TEST_CASE("an impossibility in flight is a domain or zero-probability error, nothing else") {
  CHECK(caught_as_impossibility(Error(ErrorKind::kDomain, "sd must be positive")));
  CHECK(caught_as_impossibility(Error(ErrorKind::kZeroProbability, "impossible")));
  CHECK_FALSE(caught_as_impossibility(Error(ErrorKind::kType, "not a number")));
  CHECK_FALSE(caught_as_impossibility(std::runtime_error("other")));
  CHECK_FALSE(caught_as_impossibility(42));  // not an exception type at all, as DeferredRepair is not an Error
}

}  // namespace
}  // namespace vnt::error_tests
