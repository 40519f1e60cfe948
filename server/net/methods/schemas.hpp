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

inline json entity() { return protocol::entity_id_schema(); }
inline json names() { return {{"type", "array"}, {"items", {{"type", "string"}, {"maxLength", 64}}}, {"maxItems", 1024}}; }
inline json component_map() {
    return {{"type", "object"}, {"description", "{\"ComponentName\": value}; a tag or all-defaults takes {}"}};
}
inline json page_limit() { return {{"type", "integer"}, {"minimum", 0}, {"maximum", 10000}, {"default", 100}}; }
inline json page_offset() { return {{"type", "integer"}, {"minimum", 0}, {"default", 0}}; }

/// @brief The entity id param (the schema already checked it).
inline std::uint64_t entity_param(const json& params, const char* key = "entity") {
    return params.at(key).get<std::uint64_t>();
}

inline std::optional<std::vector<std::string>> optional_names(const json& params, const char* key) {
    if (!params.contains(key)) return std::nullopt;
    return params.at(key).get<std::vector<std::string>>();
}

}  // namespace ecsd::net::schemas
