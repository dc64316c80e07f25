// AggregateFields: how many fields an aggregate struct has, at compile time. FieldList.h checks each options
// struct's list against it, so a field added to JobConfig cannot silently stay behind in the launcher while its
// workers run with the default.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

namespace balancenet {
namespace detail {

// Converts to any field's type: T{AnyField, AnyField, ...} compiles for up to as many initialisers as T has fields.
struct AnyField {
  template <typename T>
  operator T() const;  // declared only: used in unevaluated contexts
};

template <typename T, typename Indices, typename = void>
struct BracesTake : std::false_type {};
template <typename T, std::size_t... I>
struct BracesTake<T, std::index_sequence<I...>, std::void_t<decltype(T{(void(I), AnyField{})...})>> : std::true_type {};

}  // namespace detail

template <typename T, std::size_t N = 0>
constexpr std::size_t aggregateFields() {
  static_assert(std::is_aggregate_v<T>, "aggregateFields counts the fields of aggregates only");
  if constexpr (detail::BracesTake<T, std::make_index_sequence<N + 1>>::value)
    return aggregateFields<T, N + 1>();
  else
    return N;
}

}  // namespace balancenet
