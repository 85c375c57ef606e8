// vnt::Datum made from the C++ types an application has at hand: every integer type, characters refused, string
// views, fixed-size Eigen types and Eigen expressions.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "vnt/vnt.hpp"

namespace {

// A long or a size_t was ambiguous among bool, double and int; a char became its code.
static_assert(std::is_convertible_v<long, vnt::Datum>);
static_assert(std::is_convertible_v<size_t, vnt::Datum>);
static_assert(std::is_convertible_v<uint64_t, vnt::Datum>);
static_assert(std::is_convertible_v<std::string_view, vnt::Datum>);
static_assert(std::is_convertible_v<Eigen::Vector3d, vnt::Datum>);
static_assert(std::is_convertible_v<Eigen::Matrix2d, vnt::Datum>);
static_assert(!std::is_constructible_v<vnt::Datum, char>);
static_assert(!std::is_constructible_v<vnt::Datum, char32_t>);
static_assert(!std::is_constructible_v<vnt::Datum, std::nullptr_t>);

double number(const vnt::Datum& d) {
  REQUIRE(std::holds_alternative<double>(d.value));
  return std::get<double>(d.value);
}

}  // namespace

TEST_CASE("every integer type is a number, a bool stays a bool") {
  CHECK(number(vnt::Datum(7)) == 7);
  CHECK(number(vnt::Datum(-7L)) == -7);
  CHECK(number(vnt::Datum(size_t{12})) == 12);
  CHECK(number(vnt::Datum(int64_t{-3})) == -3);
  CHECK(number(vnt::Datum(uint8_t{200})) == 200);
  CHECK(number(vnt::Datum(short{-2})) == -2);
  CHECK(number(vnt::Datum(2.5f)) == 2.5);
  CHECK(number(vnt::Datum(uint64_t{1} << 60)) == 1152921504606846976.0);
  vnt::Datum b(true);
  REQUIRE(std::holds_alternative<bool>(b.value));
  CHECK(std::get<bool>(b.value));
}

TEST_CASE("a string view is a string value") {
  std::string text = "a string";
  vnt::Datum d(std::string_view(text).substr(2));
  REQUIRE(std::holds_alternative<std::string>(d.value));
  CHECK(std::get<std::string>(d.value) == "string");
  CHECK(!d.printed);
}

TEST_CASE("Eigen types and expressions: one column or one row is a vector, anything else a matrix") {
  vnt::Datum v3(Eigen::Vector3d(1, 2, 3));
  REQUIRE(std::holds_alternative<Eigen::VectorXd>(v3.value));
  CHECK(std::get<Eigen::VectorXd>(v3.value) == Eigen::Vector3d(1, 2, 3));

  Eigen::MatrixXd x(2, 3);
  x << 1, 2, 3, 4, 5, 6;
  vnt::Datum row(x.row(1));  // a data row, the common way to load one
  REQUIRE(std::holds_alternative<Eigen::VectorXd>(row.value));
  CHECK(std::get<Eigen::VectorXd>(row.value) == Eigen::Vector3d(4, 5, 6));
  vnt::Datum column(x.col(2));
  REQUIRE(std::holds_alternative<Eigen::VectorXd>(column.value));
  CHECK(std::get<Eigen::VectorXd>(column.value) == Eigen::Vector2d(3, 6));

  vnt::Datum m2(Eigen::Matrix2d::Identity() * 2);
  REQUIRE(std::holds_alternative<Eigen::MatrixXd>(m2.value));
  CHECK(std::get<Eigen::MatrixXd>(m2.value) == Eigen::Matrix2d::Identity() * 2);
  vnt::Datum block(x.topLeftCorner(2, 2));
  REQUIRE(std::holds_alternative<Eigen::MatrixXd>(block.value));
  CHECK(std::get<Eigen::MatrixXd>(block.value).rows() == 2);

  vnt::Datum floats(Eigen::VectorXf::Constant(2, 0.5f));
  REQUIRE(std::holds_alternative<Eigen::VectorXd>(floats.value));
  CHECK(std::get<Eigen::VectorXd>(floats.value) == Eigen::Vector2d(0.5, 0.5));
  vnt::Datum ints(Eigen::Vector2i(3, -1));
  REQUIRE(std::holds_alternative<Eigen::VectorXd>(ints.value));
  CHECK(std::get<Eigen::VectorXd>(ints.value) == Eigen::Vector2d(3, -1));
}

TEST_CASE("data given as Eigen rows and integer labels load as the same values as VectorXd and double") {
  Eigen::MatrixXd x(3, 2);
  x << 0.5, -1, 2, 0.25, -0.75, 1.5;
  const std::vector<int64_t> y = {1, 0, 1};
  auto load = [&](bool as_eigen_rows) {
    vnt::Options o;
    o.seed = 4;
    vnt::Runtime rt(o);
    rt.assume("w", "(multivariate_normal (vector 0 0 0) (id_matrix 3))");
    rt.assume("y_x", "(lambda (x) (bernoulli (linear_logistic w x)))");
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      if (as_eigen_rows) rt.observe_apply("y_x", {x.row(i)}, y[static_cast<size_t>(i)]);
      else rt.observe_apply("y_x", {Eigen::VectorXd(x.row(i).transpose())}, static_cast<double>(y[size_t(i)]));
    }
    rt.infer("(repeat 20 (do (mh default one 'drift 0.3 1) (collect (lookup w 1))))");
    return rt.draws("(lookup w 1)");
  };
  const std::vector<double> rows = load(true);
  CHECK(rows.size() == 20);
  CHECK(rows == load(false));
}
