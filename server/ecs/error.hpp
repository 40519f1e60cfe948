#pragma once
// The one exception type the ECS core and the world throw. Its reason is a row of the protocol's
// reason table (ecsd/protocol/errors.hpp), the one error vocabulary every layer uses, so the server
// answers with it as it is: there is no second list to match at run time.

#include <stdexcept>
#include <string>

#include "ecsd/protocol/errors.hpp"

namespace ecsd::ecs {

/// @brief Why the core refused a request: the protocol's reasons (`reason::no_such_entity`, ...).
using reason = protocol::reason;

/// @brief A request the core refuses; nothing was changed when it is thrown.
class ecs_error : public std::runtime_error {
  public:
    ecs_error(reason why, const std::string& message) : std::runtime_error(message), reason_(why) {}
    /// @brief Why the request was refused.
    [[nodiscard]] reason why() const noexcept { return reason_; }
    /// @brief The reason's wire name, e.g. "no_such_entity".
    [[nodiscard]] std::string_view reason_name() const noexcept { return protocol::name(reason_); }

  private:
    reason reason_;
};

}  // namespace ecsd::ecs
