#pragma once
// Schema pieces and param readers shared by the world-content families
// (entity, component, query, system, spell, prefab methods).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecsd/protocol/ids.hpp"

namespace ecsd::net::schemas {

using nlohmann::json;

inline json entity() {
    return protocol::entity_id_schema();
}
/// @brief An entity a request names: its id, or its Name (a string).
inline json entity_ref() {
    return {
        {"anyOf", {protocol::entity_id_schema(), {{"type", "string"}, {"minLength", 1}, {"maxLength", 64}}}}};
}
inline json names() {
    return {{"type", "array"}, {"items", {{"type", "string"}, {"maxLength", 64}}}, {"maxItems", 1024}};
}
inline json component_map() {
    return {{"type", "object"},
            {"description", "{\"ComponentName\": value}; a tag or all-defaults takes {}"}};
}
inline json page_limit() {
    return {{"type", "integer"}, {"minimum", 0}, {"maximum", 10000}, {"default", 100}};
}
inline json page_offset() {
    return {{"type", "integer"}, {"minimum", 0}, {"default", 0}};
}

/// @brief The entity param (the schema already checked it): an id, or a Name looked up in `w`.
template <typename W>
std::uint64_t entity_param(const W& w, const json& params, const char* key = "entity") {
    return w.entity_ref(params.at(key));
}

/// @brief A query: text ("Position, !Frozen, near(0, 0, 10)") or {all, any, none, optional, added, changed,
/// removed, died, near, where}.
inline json query() {
    const json structured = {{"type", "object"},
                             {"additionalProperties", false},
                             {"properties",
                              {{"all", names()},
                               {"any", names()},
                               {"none", names()},
                               {"optional", names()},
                               {"added", names()},
                               {"changed", names()},
                               {"removed", names()},
                               {"died", {{"type", "boolean"}}},
                               {"near", {{"type", "object"}}},
                               {"where", {{"type", "array"}, {"maxItems", 16}}}}}};
    return {{"anyOf", {{{"type", "string"}, {"maxLength", 4096}}, structured}}};
}

inline std::optional<std::vector<std::string>> optional_names(const json& params, const char* key) {
    if (!params.contains(key)) return std::nullopt;
    return params.at(key).get<std::vector<std::string>>();
}

}  // namespace ecsd::net::schemas
