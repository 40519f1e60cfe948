#pragma once
// Queries: all / any / none component sets plus per-tick change filters, and
// the text form `Position, Velocity, !Frozen, Health|Shield, ?AI` parsed into the
// same thing. Names are resolved to ids by the registry (registry::resolve).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecs/signature.hpp"

namespace ecsd::ecs {

/// @brief Interest management: entities whose Position lies within `r` of a point, or of a
/// (moving) entity's Position. The registry knows no Position, so the world applies it.
struct near_term {
    double x = 0, y = 0, r = 0;
    std::optional<std::uint64_t> entity;  ///< set: centre on this entity's Position
    /// @brief Set instead of `entity` by `near(hero, r)`: the entity with this Name, which the world
    /// resolves (the registry knows no names either).
    std::optional<std::string> entity_name;
};

/// @brief A value filter such as `Health.hp < 50`: the entity has the component and its field
/// compares so. == and != compare any values; the others numbers with numbers, text with text.
struct value_filter {
    std::string component;
    std::string field;
    std::string op;        // == != < <= > >=
    nlohmann::json value;  // a number, a string, true, false or null; [] or {} for == and !=
    /// Set: compare with this field of the same entity instead of `value` (`Health.hp < Health.max`).
    std::string other_component{};  // (initialised, so {component, field, op, value} stays warning-free)
    std::string other_field{};
    [[nodiscard]] bool with_field() const noexcept { return !other_component.empty(); }
};

/// @brief A query by component names, as a client writes it.
struct query_terms {
    std::vector<std::string> all;
    std::vector<std::vector<std::string>> any;  // each group: at least one member present
    std::vector<std::string> none;
    std::vector<std::string>
        optional;  // `?Name`: filters nothing, carried when present (flecs's optional terms)
    std::vector<std::string> added;     // component added in the last tick or since
    std::vector<std::string> changed;   // component written, added or lost in the last tick or since
    std::vector<std::string> removed;   // component removed in the last tick or since
    bool died = false;                  // entities destroyed in the last tick or since
    bool match_all = false;             // "*": every live entity
    std::optional<near_term> near;      // near(x, y, r) or near(ENTITY, r), ENTITY an id or a Name
    std::vector<value_filter> where;    // `Health.hp < 50`: applied by the world, like near
    std::optional<std::uint64_t> only;  // this one entity (single-entity watches; no text form)
};

/// @brief Parses the text form. Terms are separated by commas:
///   `Name` must have, `!Name` must not have, `A|B` at least one of, `?Name` optional (no filter;
///   the component is carried where present),
///   `added(Name)`, `changed(Name)`, `removed(Name)`, `died`, `*` for everything, and
///   `near(x, y, r)` / `near(ENTITY, r)` (Position within r of a point or of an entity; ENTITY an id,
///   a Name such as `hero`, or a quoted one `"big boss"`), and value
///   filters `Name.field OP literal` (OP one of == != < <= > >=; the literal JSON: 50, "boss", true),
///   which also require the component.
/// Throws ecs_error(invalid_params) naming the position of the first bad term.
[[nodiscard]] query_terms parse_query(std::string_view text);

/// @brief What is wrong with a filter's operator and literal (ordering needs a number or a
/// text), or nullopt when they go together.
[[nodiscard]] std::optional<std::string> filter_problem(const value_filter& f);
/// @brief Whether a field's value passes the filter.
[[nodiscard]] bool filter_passes(const value_filter& f, const nlohmann::json& field_value);
/// @brief As filter_passes, against another value than f.value (a field-to-field filter's other field).
[[nodiscard]] bool filter_passes(const value_filter& f, const nlohmann::json& field_value,
                                 const nlohmann::json& other);

/// @brief A query resolved to component ids.
struct query {
    component_mask all;
    component_mask none;
    std::vector<component_mask> any;
    std::vector<component_id> all_ids;
    std::vector<component_id> added;
    std::vector<component_id> changed;
    std::vector<component_id> removed;
    bool died = false;
};

}  // namespace ecsd::ecs
