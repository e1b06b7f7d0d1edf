// Checked arithmetic for sizes and counts read from input (tensor dims, byte sizes, offsets,
// repeat counts, cache sizes): the one place where an overflowing product or sum is detected
// instead of wrapping modulo 2^64. Every caller that multiplies or adds untrusted sizes uses
// these, so a new reader does not invent its own (and forget a case).
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

namespace gguflow {

// a * b, or nullopt when the exact result does not fit in T.
template <typename T>
[[nodiscard]] constexpr std::optional<T> checked_mul(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T out{};
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a + b, or nullopt when the exact result does not fit in T.
template <typename T>
[[nodiscard]] constexpr std::optional<T> checked_add(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T out{};
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a - b, or nullopt when the exact result does not fit in T.
template <typename T>
[[nodiscard]] constexpr std::optional<T> checked_sub(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T out{};
  if (__builtin_sub_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of all values, or nullopt when any partial product overflows.
template <typename T, typename Range>
[[nodiscard]] constexpr std::optional<T> checked_product(const Range& values) {
  T out = 1;
  for (const auto& v : values) {
    auto next = checked_mul<T>(out, static_cast<T>(v));
    if (!next) return std::nullopt;
    out = *next;
  }
  return out;
}

}  // namespace gguflow
