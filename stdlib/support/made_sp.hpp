// Shared by the makers of procedures with state (make_beta_bernoulli, make_crp): a maker's positive parameter, the
// state an application of the made procedure reads, and the state of a procedure the maker made.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>
#include <type_traits>
#include <typeinfo>

#include "runtime/core/error.hpp"
#include "runtime/sp/param_spec.hpp"
#include "runtime/sp/sp.hpp"
#include "runtime/value/coerce.hpp"

namespace vnt::stdlib {

/// Argument i of `maker` (called `name`) as a number, which must be positive and finite: kType, kDomain otherwise.
inline double positive_param(const Args& args, size_t i, std::string_view maker, std::string_view name) {
  const double v = as_double(args[i], ArgRef{maker, i + 1, name});
  if (!in_domain(Domain::kPositive, v))
    raise(ErrorKind::kDomain, "{}: argument {} ({}) is {}, but {}", maker, i + 1, name, to_string(Value(v)),
          domain_requirement(Domain::kPositive, v));
  return v;
}

/// The state (`what`, for the message of a caller's bug) of an application of the made procedure `sp`, which takes
/// at most `max_operands` operands (kArity otherwise).
template <class Aux>
Aux& made_state(const Args& args, std::string_view sp, std::string_view what, size_t max_operands = 0) {
  // Compared by type, not dynamic_cast (a twentieth of collapsed Gibbs): the state classes are final.
  static_assert(std::is_final_v<Aux>);
  check_arity(sp, args, 0, max_operands);
  SpAux* aux = args.aux();
  VNT_ASSERT(aux != nullptr && typeid(*aux) == typeid(Aux), "{} applied without its {}", sp, what);
  return static_cast<Aux&>(*aux);
}

/// The state of the procedure `made`, which `maker` made (when the maker absorbs a change of its arguments and scores
/// what the procedure's applications hold).
template <class Aux>
Aux& state_of_made(const Value& made, std::string_view maker) {
  const auto* p = is_procedure(made) ? dynamic_cast<const SpProcedure*>(std::get<ProcPtr>(made).get()) : nullptr;
  auto* aux = p != nullptr ? dynamic_cast<Aux*>(p->aux()) : nullptr;
  VNT_ASSERT(aux, "{}: scoring {}, which it did not make", maker, to_string(made));
  return *aux;
}

}  // namespace vnt::stdlib
