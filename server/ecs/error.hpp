#pragma once
// The one exception type the ECS core and the world throw. Its reason is one of
// the protocol's stable reason strings, so the server maps it without guessing.

#include <stdexcept>
#include <string>

namespace ecsd::ecs {

/// @brief Stable reason strings shared with the wire protocol (docs/protocol.md).
namespace reason {
inline constexpr const char* no_such_entity = "no_such_entity";
inline constexpr const char* no_such_component = "no_such_component";
inline constexpr const char* component_exists = "component_exists";
inline constexpr const char* invalid_value = "invalid_value";
inline constexpr const char* invalid_params = "invalid_params";
inline constexpr const char* no_such_system = "no_such_system";
inline constexpr const char* no_such_spell = "no_such_spell";
inline constexpr const char* no_such_prefab = "no_such_prefab";
inline constexpr const char* no_such_world = "no_such_world";
inline constexpr const char* world_exists = "world_exists";
inline constexpr const char* limit_reached = "limit_reached";
}  // namespace reason

/// @brief A request the core refuses; nothing was changed when it is thrown.
class ecs_error : public std::runtime_error {
  public:
    ecs_error(const char* why, const std::string& message) : std::runtime_error(message), reason_(why) {}
    /// @brief One of the strings in ecsd::ecs::reason.
    [[nodiscard]] const char* reason() const noexcept { return reason_; }

  private:
    const char* reason_;
};

}  // namespace ecsd::ecs
