// FieldList: an options struct names the fields a launcher sends its workers beside their declarations, so that a
// new field is added in its struct and nowhere else to travel (job/JobConfigJson.cpp walks every list). A struct
// that keeps some fields behind (each worker derives them) says how many, and BALANCENET_CHECK_FIELDS fails the
// build in that struct's own header when a field is neither listed nor counted there.
#pragma once
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "balancenet/core/AggregateFields.h"

// In the struct, after its fields: BALANCENET_FIELDS(name, other, ...); the members themselves, by their names,
// which are also their names in the JSON.
#define BALANCENET_FIELDS(...)                             \
  auto fieldRefs() { return std::tie(__VA_ARGS__); }       \
  auto fieldRefs() const { return std::tie(__VA_ARGS__); } \
  static constexpr const char* kFieldNames = #__VA_ARGS__

// After the struct: the list and the count of kept fields (`static constexpr std::size_t kLocalFields`, none where
// absent) together cover every field.
#define BALANCENET_CHECK_FIELDS(Struct)                                                                       \
  static_assert(::balancenet::listsEveryField<Struct>(), #Struct                                              \
                "'s BALANCENET_FIELDS: a field was added to the struct; list it (it travels to the workers) " \
                "or count it in kLocalFields (each worker derives it)")

namespace balancenet {

template <typename T>
using FieldRefs = decltype(std::declval<T&>().fieldRefs());

// A struct with a field list.
template <typename T, typename = void>
struct HasFieldList : std::false_type {};
template <typename T>
struct HasFieldList<T, std::void_t<FieldRefs<T>>> : std::true_type {};
template <typename T>
inline constexpr bool hasFieldList = HasFieldList<T>::value;

template <typename T, typename = void>
struct LocalFields : std::integral_constant<std::size_t, 0> {};
template <typename T>
struct LocalFields<T, std::void_t<decltype(T::kLocalFields)>> : std::integral_constant<std::size_t, T::kLocalFields> {};

template <typename T>
constexpr bool listsEveryField() {
  return std::tuple_size_v<FieldRefs<T>> + LocalFields<T>::value == aggregateFields<T>();
}

// "a, b,  c" (the list as the preprocessor wrote it) as {"a", "b", "c"}.
std::vector<std::string> fieldNames(const char* list);

// Calls visit(name, field) for each listed field of `object`, in the list's order (const or not).
template <typename T, typename Visit>
void forEachField(T& object, Visit&& visit) {
  static const std::vector<std::string> names = fieldNames(std::remove_const_t<T>::kFieldNames);
  std::size_t i = 0;
  std::apply([&](auto&... field) { (visit(names[i++], field), ...); }, object.fieldRefs());
}

}  // namespace balancenet
