// apply_psp reports what an SP throws at the application: positions, and allocation failures as user errors.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <new>

#include "runtime/core/diagnostics.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::apply_psp_tests {
namespace {

/// An SP whose allocation fails, as an Eigen or std::vector allocation of a huge size does.
class HogSp final : public Sp {
 public:
  std::string_view name() const override { return "hog"; }
  Value simulate(const Args& /*args*/, Rng& /*rng*/) const override { throw std::bad_alloc(); }
};

TEST_CASE("an allocation failure inside an SP is a domain error at the application") {
  Engine e;
  e.registry().add(std::make_shared<HogSp>());
  test::run(e, "[assume x 1]");
  try {
    test::run(e, "[predict (+ x (hog 3))]");
    FAIL("expected an error");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::kDomain);
    CHECK(render_error_line(err) == "test.vnt:1:15: error: hog: out of memory");
  }
  // The failed directive left the trace as it was: the engine goes on.
  CHECK(e.directives().size() == 1);
  CHECK(test::sample_number(e, "(+ x 1)") == 2);
}

TEST_CASE("a size past the builtin limit is reported at the application, before any allocation") {
  Engine e;
  try {
    test::run(e, "[predict (size (zeros 1e12))]");
    FAIL("expected an error");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::kDomain);
    CHECK(render_error_line(err) ==
          "test.vnt:1:16: error: zeros: argument 1 is 1000000000000, but must be at most 100000000");
  }
}

}  // namespace
}  // namespace vnt::apply_psp_tests
