#pragma once
// Conversion of one field value between C++ and JSON, with validation and
// hashing. Both typed (C++ struct) and run-time components use these, so the
// two kinds validate, serialize and hash alike.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecs/entity.hpp"
#include "ecs/error.hpp"
#include "ecs/state_hasher.hpp"

namespace ecsd::ecs {

using json = nlohmann::json;

/// @brief A field that names another entity ("entity" in schemas).
struct entity_ref {
    entity_id id = null_entity;
    friend bool operator==(const entity_ref&, const entity_ref&) = default;
};

namespace internal {
/// @brief A refused value as an error message shows it: short, and never a float standing in for
/// an integer the parser could not hold (18446744073709551616 would read 1.8446744073709552e+19):
/// where the expectation states a range (`ranged`), such a number is "a number outside that range".
inline std::string shown_value(const json& got, bool ranged = false) {
    if (got.is_number_float() && std::fabs(got.get<double>()) >= 9223372036854775808.0) {
        if (ranged) return "a number outside that range";
        return got.get<double>() < 0 ? "a number <= -2^63" : "a number >= 2^63";
    }
    std::string text = got.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 80) {
        text.resize(77);
        while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0U) == 0x80U) text.pop_back();
        if (!text.empty() && static_cast<unsigned char>(text.back()) >= 0xC0U)
            text.pop_back();  // a cut lead byte
        text += "...";
    }
    return text;
}

[[noreturn]] inline void bad_value(std::string_view where, std::string_view want, const json& got,
                                   bool ranged = false) {
    throw ecs_error(reason::invalid_value, std::string(where) + ": expected " + std::string(want) + ", got " +
                                               shown_value(got, ranged));
}

/// @brief An integer bound as a message shows it: 2^53 for the largest exact one, digits otherwise.
inline std::string bound_text(double v) {
    if (std::fabs(v) == 9007199254740992.0) return v < 0 ? "-2^53" : "2^53";
    if (v == 9007199254740991.0) return "2^53 - 1";
    return std::to_string(static_cast<std::int64_t>(v));
}

/// @brief The largest integer every JSON client reads exactly (2^53).
inline constexpr double max_exact = 9007199254740992.0;

/// @brief Largest magnitude a number field takes: far from overflow, so a simulation that starts
/// from valid values cannot reach inf or NaN (which JSON cannot carry back).
inline constexpr double max_number = 1e15;

/// @brief Longest string a component field holds, in bytes: the same for a client's request, a
/// snapshot file and an import (a restored world is held to it too, so no door lets a larger one in).
inline constexpr std::size_t max_string_bytes = 65536;

/// @brief Nonzero while a saved world is being restored on this thread (see restoring_scope).
inline thread_local int restoring_depth = 0;
/// @brief True while restoring: values are taken as the world held them, not as a client sends them.
[[nodiscard]] inline bool restoring() noexcept {
    return restoring_depth != 0;
}

inline double read_number(const json& j, std::string_view where) {
    if (!j.is_number()) bad_value(where, "a number", j);
    const double v = j.get<double>();
    // A saved world may hold what an older server let through (or what the systems reached before
    // they clamped): any finite number loads again, so a server never refuses its own state.
    if (!std::isfinite(v) || (std::fabs(v) > max_number && !restoring()))
        bad_value(where, "a number between -1e15 and 1e15", j, true);
    return v;
}

inline std::int64_t read_integer(const json& j, std::string_view where, double lo, double hi) {
    const std::string want = "an integer from " + bound_text(lo) + " to " + bound_text(hi);
    if (j.is_number_integer()) {
        if (j.is_number_unsigned()) {
            const auto u = j.get<std::uint64_t>();
            if (static_cast<double>(u) > hi) bad_value(where, want, j, true);
            return static_cast<std::int64_t>(u);
        }
        const auto v = j.get<std::int64_t>();
        if (static_cast<double>(v) < lo || static_cast<double>(v) > hi) bad_value(where, want, j, true);
        return v;
    }
    if (j.is_number_float()) {  // 3.0 from a client that only has doubles is fine; 1.5 is not
        const double d = j.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && d >= lo && d <= hi) return static_cast<std::int64_t>(d);
    }
    bad_value(where, want, j, true);
}
}  // namespace internal

/// @brief While one lives, values read on this thread are a saved world's (a snapshot being
/// restored), not a client's: numbers beyond ±1e15 and values that break a component's rules
/// (check()) are taken as they were saved. Input from clients never runs inside one.
class restoring_scope {
  public:
    restoring_scope() noexcept { ++internal::restoring_depth; }
    ~restoring_scope() { --internal::restoring_depth; }
    restoring_scope(const restoring_scope&) = delete;
    restoring_scope& operator=(const restoring_scope&) = delete;
};

/// @brief value_codec<T>: type name for schemas, from/to JSON, hashing.
template <typename T>
struct value_codec;

template <>
struct value_codec<float> {
    static constexpr const char* type_name = "number";
    static float read(const json& j, std::string_view where) {
        return static_cast<float>(internal::read_number(j, where));
    }
    static json write(float v) { return v; }
    static void hash(state_hasher& h, float v) { h.add_float(v); }
};

template <>
struct value_codec<double> {
    static constexpr const char* type_name = "number";
    static double read(const json& j, std::string_view where) { return internal::read_number(j, where); }
    static json write(double v) { return v; }
    static void hash(state_hasher& h, double v) { h.add_double(v); }
};

template <>
struct value_codec<std::int32_t> {
    static constexpr const char* type_name = "integer";
    static std::int32_t read(const json& j, std::string_view where) {
        return static_cast<std::int32_t>(internal::read_integer(j, where, -2147483648.0, 2147483647.0));
    }
    static json write(std::int32_t v) { return v; }
    static void hash(state_hasher& h, std::int32_t v) { h.add_u64(static_cast<std::uint64_t>(v)); }
};

template <>
struct value_codec<std::int64_t> {
    static constexpr const char* type_name = "integer";
    static std::int64_t read(const json& j, std::string_view where) {
        return internal::read_integer(j, where, -internal::max_exact, internal::max_exact);
    }
    static json write(std::int64_t v) { return v; }
    static void hash(state_hasher& h, std::int64_t v) { h.add_u64(static_cast<std::uint64_t>(v)); }
};

template <>
struct value_codec<std::uint32_t> {
    static constexpr const char* type_name = "integer";
    static std::uint32_t read(const json& j, std::string_view where) {
        return static_cast<std::uint32_t>(internal::read_integer(j, where, 0.0, 4294967295.0));
    }
    static json write(std::uint32_t v) { return v; }
    static void hash(state_hasher& h, std::uint32_t v) { h.add_u64(v); }
};

template <>
struct value_codec<bool> {
    static constexpr const char* type_name = "bool";
    static bool read(const json& j, std::string_view where) {
        if (!j.is_boolean()) internal::bad_value(where, "true or false", j);
        return j.get<bool>();
    }
    static json write(bool v) { return v; }
    static void hash(state_hasher& h, bool v) { h.add_u64(v ? 1 : 0); }
};

template <>
struct value_codec<std::string> {
    static constexpr const char* type_name = "string";
    static std::string read(const json& j, std::string_view where) {
        if (!j.is_string()) internal::bad_value(where, "a string", j);
        const auto& text = j.get_ref<const std::string&>();
        if (text.size() > internal::max_string_bytes)
            throw ecs_error(reason::invalid_value, std::string(where) + ": expected a string of at most " +
                                                       std::to_string(internal::max_string_bytes) +
                                                       " bytes, got " + std::to_string(text.size()));
        return text;
    }
    static json write(const std::string& v) { return v; }
    static void hash(state_hasher& h, const std::string& v) { h.add_string(v); }
};

template <>
struct value_codec<entity_ref> {
    static constexpr const char* type_name = "entity";
    static entity_ref read(const json& j, std::string_view where) {
        return entity_ref{
            static_cast<entity_id>(internal::read_integer(j, where, 0.0, internal::max_exact - 1))};
    }
    static json write(entity_ref v) { return v.id; }
    static void hash(state_hasher& h, entity_ref v) { h.add_u64(v.id); }
};

template <typename E>
struct value_codec<std::vector<E>> {
    static inline const std::string type_name_storage = std::string(value_codec<E>::type_name) + "[]";
    static inline const char* type_name = type_name_storage.c_str();
    static std::vector<E> read(const json& j, std::string_view where) {
        if (!j.is_array())
            internal::bad_value(where, std::string("an array of ") + value_codec<E>::type_name, j);
        std::vector<E> out;
        out.reserve(j.size());
        for (const auto& item : j) out.push_back(value_codec<E>::read(item, where));
        return out;
    }
    static json write(const std::vector<E>& v) {
        json out = json::array();
        for (const auto& item : v) out.push_back(value_codec<E>::write(item));
        return out;
    }
    static void hash(state_hasher& h, const std::vector<E>& v) {
        h.add_u64(v.size());
        for (const auto& item : v) value_codec<E>::hash(h, item);
    }
};

}  // namespace ecsd::ecs
