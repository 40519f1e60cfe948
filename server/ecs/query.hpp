#pragma once
// Queries: all / any / none component sets plus per-tick change filters, and
// the text form `Position, Velocity, !Frozen, Health|Shield` parsed into the
// same thing. Names are resolved to ids by the registry (registry::resolve).

#include <string>
#include <string_view>
#include <vector>

#include "ecs/signature.hpp"

namespace ecsd::ecs {

/// @brief A query by component names, as a client writes it.
struct query_terms {
    std::vector<std::string> all;
    std::vector<std::vector<std::string>> any;  // each group: at least one member present
    std::vector<std::string> none;
    std::vector<std::string> added;    // component added in the last tick or since
    std::vector<std::string> changed;  // component written (or added) in the last tick or since
    std::vector<std::string> removed;  // component removed in the last tick or since
    bool died = false;                 // entities destroyed in the last tick or since
    bool match_all = false;            // "*": every live entity
};

/// @brief Parses the text form. Terms are separated by commas:
///   `Name` must have, `!Name` must not have, `A|B` at least one of,
///   `added(Name)`, `changed(Name)`, `removed(Name)`, `died`, and `*` for everything.
/// Throws ecs_error(invalid_params) naming the position of the first bad term.
[[nodiscard]] query_terms parse_query(std::string_view text);

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
