// Checked conversions with messages that name the procedure and the argument.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/value/coerce.hpp"

namespace vnt {

void throw_arg_type(const ArgRef& where, std::string_view expected, const Value& got) {
  if (where.param.empty())
    raise(ErrorKind::kType, "{}: argument {} must be {}, got {}", where.proc, where.position, expected,
          kind_name(got));
  raise(ErrorKind::kType, "{}: argument {} ({}) must be {}, got {}", where.proc, where.position, where.param,
        expected, kind_name(got));
}

const Eigen::MatrixXd& as_matrix(const Value& v, const ArgRef& where) {
  if (auto* p = std::get_if<MatrixPtr>(&v)) return **p;
  throw_arg_type(where, "a matrix", v);
}

const List& as_list(const Value& v, const ArgRef& where) {
  if (auto* p = std::get_if<ListPtr>(&v)) return **p;
  throw_arg_type(where, "a list", v);
}

bool as_bool(const Value& v, const ArgRef& where) {
  if (auto* b = std::get_if<bool>(&v)) return *b;
  if (auto* d = std::get_if<double>(&v)) return *d != 0.0;
  throw_arg_type(where, "a boolean", v);
}

void throw_not_index(const Value& v, const ArgRef& where) {
  if (where.param.empty())
    raise(ErrorKind::kDomain, "{}: argument {} is {}, but must be a non-negative integer", where.proc,
          where.position, to_string(v));
  raise(ErrorKind::kDomain, "{}: argument {} ({}) is {}, but must be a non-negative integer", where.proc,
        where.position, where.param, to_string(v));
}

}  // namespace vnt
