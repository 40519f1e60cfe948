#include "ecsd/protocol/errors.hpp"

#include <array>

namespace ecsd::protocol {
namespace {

// Order matches enum class reason; a static_assert below keeps them in step.
constexpr std::array<reason_info, 24> table{{
    {reason::parse_error, "parse_error", -32700, "Parse error"},
    {reason::invalid_request, "invalid_request", -32600, "Invalid Request"},
    {reason::method_not_found, "method_not_found", -32601, "Method not found"},
    {reason::invalid_params, "invalid_params", -32602, "Invalid params"},
    {reason::internal, "internal", -32603, "Internal error"},
    {reason::no_such_world, "no_such_world", -32001, "No such world"},
    {reason::world_exists, "world_exists", -32002, "World already exists"},
    {reason::no_such_entity, "no_such_entity", -32003, "No such entity"},
    {reason::no_such_component, "no_such_component", -32004, "No such component"},
    {reason::component_exists, "component_exists", -32005, "Component already exists"},
    {reason::invalid_value, "invalid_value", -32006, "Invalid value"},
    {reason::no_such_system, "no_such_system", -32007, "No such system"},
    {reason::no_such_spell, "no_such_spell", -32008, "No such spell"},
    {reason::no_such_prefab, "no_such_prefab", -32009, "No such prefab"},
    {reason::unauthorized, "unauthorized", -32010, "Unauthorized"},
    {reason::too_large, "too_large", -32011, "Too large"},
    {reason::limit_reached, "limit_reached", -32012, "Limit reached"},
    {reason::storage_error, "storage_error", -32013, "Storage error"},
    {reason::rate_limited, "rate_limited", -32014, "Rate limited"},
    {reason::timeout, "timeout", -32015, "Timeout"},
    {reason::no_such_subscription, "no_such_subscription", -32016, "No such subscription"},
    {reason::world_sealed, "world_sealed", -32017, "World sealed"},
    {reason::no_such_action, "no_such_action", -32018, "No such action"},
    {reason::action_failed, "action_failed", -32019, "Action failed"},
}};

constexpr bool table_in_enum_order() {
    for (std::size_t i = 0; i < table.size(); ++i) {
        if (static_cast<std::size_t>(table[i].id) != i) return false;
    }
    return table.back().id == reason::action_failed;
}
static_assert(table_in_enum_order(), "reason table rows must follow enum order");

}  // namespace

std::span<const reason_info> all_reasons() noexcept {
    return table;
}

const reason_info& info(reason r) noexcept {
    return table[static_cast<std::size_t>(r)];
}

std::optional<reason> reason_from_name(std::string_view wire_name) noexcept {
    for (const auto& row : table) {
        if (row.name == wire_name) return row.id;
    }
    return std::nullopt;
}

}  // namespace ecsd::protocol
