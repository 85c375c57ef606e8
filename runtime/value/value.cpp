// Construction, printing, equality and hashing of values.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/value/value.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "runtime/core/source_text.hpp"
#include "runtime/core/utf8.hpp"

namespace vnt {

Value make_symbol(std::string_view name) { return Symbol{std::make_shared<const std::string>(name)}; }
Value make_string(std::string s) { return std::make_shared<const std::string>(std::move(s)); }
Value make_list(std::vector<Value> items) { return list_value(List(std::move(items))); }
Value list_value(List l) { return std::make_shared<const List>(std::move(l)); }
Value make_vector(Eigen::VectorXd v) { return std::make_shared<const Eigen::VectorXd>(std::move(v)); }
Value make_matrix(Eigen::MatrixXd m) { return std::make_shared<const Eigen::MatrixXd>(std::move(m)); }

std::string_view kind_name(const Value& v) {
  switch (v.index()) {
    case 0: return "nil";
    case 1: return "a boolean";
    case 2: return "a number";
    case 3: return "a symbol";
    case 4: return "a string";
    case 5: return "a list";
    case 6: return "a vector";
    case 7: return "a matrix";
    case 8: return "a procedure";
  }
  return "a value";
}

namespace {

std::string number_to_string(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0 && std::signbit(x)) return "-0";  // reads back as -0: 1 / x is then -inf again
  if (x == std::floor(x) && std::fabs(x) < 1e15) return fmt::format("{}", static_cast<long long>(x));
  return fmt::format("{}", x);
}

// Written the way the reader reads it back (the escapes it resolves), so one printed value is one line, and
// characters a terminal would act on (controls, bidi overrides) or that are not UTF-8 are \xNN, as in messages.
std::string quote_string(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_column_size(s.substr(i));
    switch (n == 1 ? s[i] : '\0') {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: out += shown_column(s.substr(i, n));
    }
    i += n;
  }
  return out + '"';
}

}  // namespace

std::string to_string(const Value& v) {
  struct Printer {
    std::string operator()(const Nil&) const { return "nil"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(double x) const { return number_to_string(x); }
    // Controls, bidi overrides and malformed bytes as \\xNN, as in a string: printed raw, a terminal acts on them.
    std::string operator()(const Symbol& s) const { return shown_text(s.str()); }
    std::string operator()(const StringPtr& s) const { return quote_string(*s); }
    std::string operator()(const ListPtr& l) const {
      std::string out = "(";
      for (size_t i = 0; i < l->size(); ++i) {
        if (i) out += ' ';
        out += to_string(l->items()[i]);
      }
      return out + ")";
    }
    std::string operator()(const VectorPtr& p) const {
      std::string out = "[";
      for (Eigen::Index i = 0; i < p->size(); ++i) {
        if (i) out += ' ';
        out += number_to_string((*p)[i]);
      }
      return out + "]";
    }
    std::string operator()(const MatrixPtr& m) const {
      std::string out = "[";
      for (Eigen::Index r = 0; r < m->rows(); ++r) {
        out += r ? " [" : "[";
        for (Eigen::Index c = 0; c < m->cols(); ++c) {
          if (c) out += ' ';
          out += number_to_string((*m)(r, c));
        }
        out += "]";
      }
      return out + "]";
    }
    std::string operator()(const ProcPtr& p) const { return fmt::format("<procedure {}>", p->name()); }
  };
  return std::visit(Printer{}, v);
}

namespace {

// IEEE equality for the language's `=`; keys (mem arguments, scope blocks) need NaN to equal itself, or a key
// never finds its own entry.
bool doubles_equal(double x, double y, bool nan_is_equal) {
  return x == y || (nan_is_equal && std::isnan(x) && std::isnan(y));
}

bool equal(const Value& a, const Value& b, bool nan_is_equal) {
  if (a.index() != b.index()) return false;
  switch (a.index()) {
    case 0: return true;
    case 1: return std::get<bool>(a) == std::get<bool>(b);
    case 2: return doubles_equal(std::get<double>(a), std::get<double>(b), nan_is_equal);
    case 3: return std::get<Symbol>(a).str() == std::get<Symbol>(b).str();
    case 4: return *std::get<StringPtr>(a) == *std::get<StringPtr>(b);
    case 5: {
      std::span<const Value> x = std::get<ListPtr>(a)->items();
      std::span<const Value> y = std::get<ListPtr>(b)->items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!equal(x[i], y[i], nan_is_equal)) return false;
      return true;
    }
    case 6: {
      const auto& x = *std::get<VectorPtr>(a);
      const auto& y = *std::get<VectorPtr>(b);
      if (x.size() != y.size()) return false;
      for (Eigen::Index i = 0; i < x.size(); ++i)
        if (!doubles_equal(x[i], y[i], nan_is_equal)) return false;
      return true;
    }
    case 7: {
      const auto& x = *std::get<MatrixPtr>(a);
      const auto& y = *std::get<MatrixPtr>(b);
      if (x.rows() != y.rows() || x.cols() != y.cols()) return false;
      for (Eigen::Index i = 0; i < x.size(); ++i)
        if (!doubles_equal(x.data()[i], y.data()[i], nan_is_equal)) return false;
      return true;
    }
    case 8: return std::get<ProcPtr>(a) == std::get<ProcPtr>(b);
  }
  return false;
}

}  // namespace

bool values_equal(const Value& a, const Value& b) { return equal(a, b, false); }

bool keys_equal(const Value& a, const Value& b) { return equal(a, b, true); }

namespace {

size_t mix(size_t h, size_t x) { return h ^ (x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }
// -0.0 equals 0.0, and every NaN equals every other as a key: both must hash alike.
size_t hash_double(double x) {
  if (std::isnan(x)) return 0x7ff8000000000000ULL;
  return std::hash<double>()(x == 0.0 ? 0.0 : x);
}

}  // namespace

size_t value_hash(const Value& v) {
  size_t h = v.index();
  switch (v.index()) {
    case 1: return mix(h, std::get<bool>(v));
    case 2: return mix(h, hash_double(std::get<double>(v)));
    case 3: return mix(h, std::hash<std::string_view>()(std::get<Symbol>(v).str()));
    case 4: return mix(h, std::hash<std::string>()(*std::get<StringPtr>(v)));
    case 5:
      for (const Value& x : std::get<ListPtr>(v)->items()) h = mix(h, value_hash(x));
      return h;
    case 6:
      for (double x : *std::get<VectorPtr>(v)) h = mix(h, hash_double(x));
      return h;
    case 7: {
      const auto& m = *std::get<MatrixPtr>(v);
      for (Eigen::Index i = 0; i < m.size(); ++i) h = mix(h, hash_double(m.data()[i]));
      return h;
    }
    case 8: return mix(h, std::hash<const void*>()(std::get<ProcPtr>(v).get()));
  }
  return h;
}

bool truthy(const Value& v) {
  if (is_bool(v)) return std::get<bool>(v);
  if (is_nil(v)) return false;
  if (is_number(v)) return std::get<double>(v) != 0.0;
  return true;
}

}  // namespace vnt
