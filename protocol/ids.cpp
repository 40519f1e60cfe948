#include "ecsd/protocol/ids.hpp"

namespace ecsd::protocol {

std::optional<std::uint64_t> entity_id_from_json(const nlohmann::json& value) noexcept {
    if (value.is_number_unsigned()) {
        const auto v = value.get<std::uint64_t>();
        if (v <= max_entity_id) return v;
        return std::nullopt;
    }
    if (value.is_number_integer()) {
        const auto v = value.get<std::int64_t>();
        if (v >= 0 && static_cast<std::uint64_t>(v) <= max_entity_id) return static_cast<std::uint64_t>(v);
    }
    return std::nullopt;
}

nlohmann::json entity_id_schema() {
    return {{"type", "integer"},
            {"minimum", 0},
            {"maximum", max_entity_id},
            {"description", "entity id, an integer below 2^53"}};
}

}  // namespace ecsd::protocol
