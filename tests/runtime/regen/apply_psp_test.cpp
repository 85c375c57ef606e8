// apply_psp reports what an SP throws at the application: positions, and allocation failures as user errors.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <fmt/format.h>

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

TEST_CASE("an allocation failure inside an SP is an out-of-memory error at the application") {
  Engine e;
  e.registry().add(std::make_shared<HogSp>());
  test::run(e, "[assume x 1]");
  try {
    test::run(e, "[predict (+ x (hog 3))]");
    FAIL("expected an error");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::kOutOfMemory);
    CHECK(render_error_line(err) == "test.vnt:1:15: error: hog: out of memory");
  }
  // The failed directive left the trace as it was: the engine goes on.
  CHECK(e.directives().size() == 1);
  CHECK(test::sample_number(e, "(+ x 1)") == 2);
}

/// A random SP whose draws after the first `allowed` fail to allocate.
class HungryDrawSp final : public Sp {
 public:
  explicit HungryDrawSp(int allowed) : allowed_(allowed) {}
  std::string_view name() const override { return "hungry"; }
  bool is_random() const override { return true; }
  Value simulate(const Args& /*args*/, Rng& rng) const override {
    if (allowed_-- <= 0) throw std::bad_alloc();
    return Value(rng.uniform());
  }

 private:
  mutable int allowed_;
};

// A domain error in a proposal is a state of probability zero (rejected; a particle weighed zero); running out of
// memory is not, and stops the [infer] with the trace as before the failing transition. pgibbs took it for one: a
// collapsed coin that could not be made for a new table gave its particle weight zero, and the run went on.
TEST_CASE("running out of memory in a proposal stops the kernel: it is not a state of probability zero") {
  for (std::string_view kernel : {"(mh default one 1)", "(pgibbs x ordered 2 1)", "(gibbs default one 1)"}) {
    CAPTURE(kernel);
    Engine e(3);
    e.registry().add(std::make_shared<HungryDrawSp>(1));
    test::run(e, "[assume x (scope_include 'x 0 (hungry))] [observe (normal x 1) 0.5]");
    const std::string before = test::fingerprint_of(e);
    try {
      test::run(e, fmt::format("[infer {}]", kernel));
      FAIL("expected an error");
    } catch (const Error& err) {
      CHECK(err.kind() == (kernel.starts_with("(gibbs") ? ErrorKind::kInference
                                                                          : ErrorKind::kOutOfMemory));
      CHECK(render_error_line(err).starts_with("test.vnt:1:"));
    }
    CHECK(test::fingerprint_of(e) == before);
  }
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
