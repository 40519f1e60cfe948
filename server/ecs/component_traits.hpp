#pragma once
// How a typed (C++ struct) component describes itself: its name and its
// fields. JSON conversion, validation, schema and hashing derive from this
// one description, so a built-in component is one struct plus one traits row.
//
//   template <> struct component_traits<Position> {
//       static constexpr const char* name = "Position";
//       static constexpr auto fields = std::make_tuple(field("x", &Position::x), field("y", &Position::y));
//   };

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ecs/json_text.hpp"
#include "ecs/value_codec.hpp"

namespace ecsd::ecs {

template <typename C, typename M>
struct field_desc {
    const char* name;
    M C::*member;
    using value_type = M;
};

/// @brief One field of a typed component: its JSON name and member pointer.
template <typename C, typename M>
constexpr field_desc<C, M> field(const char* name, M C::*member) {
    return {name, member};
}

/// @brief Specialize with `name` and `fields` for every typed component.
template <typename T>
struct component_traits;

/// @brief A component with no data: stored as membership only (a tag such as Player).
template <typename T>
inline constexpr bool is_tag_v = std::is_empty_v<T>;

namespace internal {
template <typename T, typename F>
void for_each_field(F&& f) {
    std::apply([&](const auto&... d) { (f(d), ...); }, component_traits<T>::fields);
}
}  // namespace internal

/// @brief The JSON object form of a typed component value.
template <typename T>
json typed_to_json(const T& value) {
    json out = json::object();
    internal::for_each_field<T>([&](const auto& d) {
        using M = typename std::decay_t<decltype(d)>::value_type;
        out[d.name] = value_codec<M>::write(value.*(d.member));
    });
    return out;
}

namespace internal {
template <typename T>
inline constexpr std::size_t field_count_v =
    std::tuple_size_v<std::decay_t<decltype(component_traits<T>::fields)>>;

/// @brief The fields' names in declaration order.
template <typename T>
constexpr auto field_names() {
    std::array<std::string_view, field_count_v<T>> names{};
    std::apply(
        [&](const auto&... d) {
            std::size_t i = 0;
            ((names[i++] = d.name), ...);
        },
        component_traits<T>::fields);
    return names;
}

/// @brief The fields' indices in the order json::dump() writes them (sorted by name), at compile time.
template <typename T>
constexpr auto sorted_field_order() {
    constexpr std::size_t n = field_count_v<T>;
    constexpr auto names = field_names<T>();
    std::array<std::size_t, n> order{};
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return names[a] < names[b]; });
    return order;
}

/// @brief The text before each value in sorted order: `{"name":` for the first, `,"name":` after.
template <typename T>
auto sorted_field_pieces() {
    constexpr auto order = sorted_field_order<T>();
    constexpr auto names = field_names<T>();
    std::array<json_piece, field_count_v<T>> out;
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = json_piece::key(names[order[i]], i == 0 ? "{" : ",");
    return out;
}

template <typename M>
void write_field_value(json_text& w, const M& v) {
    if constexpr (std::is_same_v<M, double>)
        w.number(v);
    else
        w.value(value_codec<M>::write(v));
}

/// @brief Every field in sorted order, unrolled: no call through a pointer per field.
template <typename T, std::size_t... J>
void write_sorted_fields(json_text& w, const T& value, std::index_sequence<J...>) {
    static constexpr auto order = sorted_field_order<T>();
    static const auto pieces = sorted_field_pieces<T>();
    ((w.piece(pieces[J]),
      write_field_value(w, value.*(std::get<order[J]>(component_traits<T>::fields).member))),
     ...);
}
}  // namespace internal

/// @brief Writes the JSON object form of a typed component as text (same text as
/// typed_to_json(value).dump(), without building the tree).
template <typename T>
void typed_write_text(json_text& w, const T& value) {
    if constexpr (internal::field_count_v<T> == 0) {
        w.raw("{}");
    } else {
        internal::write_sorted_fields(w, value, std::make_index_sequence<internal::field_count_v<T>>{});
        w.raw("}");
    }
}

namespace internal {
/// @brief Runs component_traits<T>::check(value) and bound(value) when the traits define them: a
/// rule across a value's fields (a mass is not negative), thrown as invalid_value naming the field.
/// A restored world skips check() (it loads what an older server let through), but never bound():
/// the limits that keep a value's size in check hold for every door, a snapshot and an import too.
template <typename T>
void check_value(const T& value) {
    if constexpr (requires { component_traits<T>::bound(value); }) component_traits<T>::bound(value);
    if constexpr (requires { component_traits<T>::check(value); }) {
        if (!restoring()) component_traits<T>::check(value);
    }
}
}  // namespace internal

/// @brief Parses a JSON object onto `base` (fields not named keep base's value).
/// Unknown fields and wrong types throw invalid_value; nothing is half-applied.
template <typename T>
T typed_from_json(const json& j, T base = T{}) {
    const std::string type = component_traits<T>::name;
    if (j.is_null() && internal::restoring()) return base;  // an older server's null: the defaults
    if (!j.is_object()) internal::bad_value(type, "an object ({} for the defaults)", j);
    for (const auto& item : j.items()) {
        const std::string& key = item.key();  // not a structured binding: clang 14 cannot capture one
        bool known = false;
        internal::for_each_field<T>([&](const auto& d) { known = known || key == d.name; });
        if (!known) throw ecs_error(reason::invalid_value, type + ": unknown field '" + key + "'");
    }
    internal::for_each_field<T>([&](const auto& d) {
        using M = typename std::decay_t<decltype(d)>::value_type;
        if (auto it = j.find(d.name); it != j.end())
            base.*(d.member) = value_codec<M>::read(*it, type + "." + d.name);
    });
    internal::check_value(base);
    return base;
}

/// @brief Sets one named field from JSON; throws invalid_value for a bad name or type.
template <typename T>
void typed_set_field(T& value, std::string_view name, const json& j) {
    const std::string type = component_traits<T>::name;
    bool found = false;
    internal::for_each_field<T>([&](const auto& d) {
        using M = typename std::decay_t<decltype(d)>::value_type;
        if (!found && name == d.name) {
            value.*(d.member) = value_codec<M>::read(j, type + "." + d.name);
            found = true;
        }
    });
    if (!found) throw ecs_error(reason::invalid_value, type + ": unknown field '" + std::string(name) + "'");
    internal::check_value(value);
}

template <typename T>
void typed_hash(state_hasher& h, const T& value) {
    internal::for_each_field<T>([&](const auto& d) {
        using M = typename std::decay_t<decltype(d)>::value_type;
        value_codec<M>::hash(h, value.*(d.member));
    });
}

/// @brief Field list with types and defaults, as reported to clients.
template <typename T>
json typed_schema_fields() {
    json fields = json::array();
    const T defaults{};
    internal::for_each_field<T>([&](const auto& d) {
        using M = typename std::decay_t<decltype(d)>::value_type;
        fields.push_back({{"name", d.name},
                          {"type", value_codec<M>::type_name},
                          {"default", value_codec<M>::write(defaults.*(d.member))}});
    });
    return fields;
}

}  // namespace ecsd::ecs
