#pragma once
// The method table, in the style of Redis's command table: one row per JSON-RPC method with its
// handler, params and result JSON Schemas and flags. The dispatcher, params validation and
// rpc.discover all read this one table, so the documentation cannot drift from the code.
//
// How to add a family of methods (e.g. entity methods):
//   1. Create server/net/methods/entity_methods.cpp:
//
//        #include "rpc/method_table.hpp"
//        namespace ecsd::net {
//        namespace {
//        nlohmann::json spawn_entity(method_context& ctx) {
//            auto& world = ctx.world();                  // world-bound: runs on that world's strand
//            const auto& params = ctx.params;            // already validated against `params` below
//            ...                                         // throw ecs::ecs_error or protocol::rpc_error
//            return {{"entity", id}};                    // the JSON-RPC result
//        }
//        }  // namespace
//        void register_entity_methods(method_table& table) {
//            table.add({.name = "world.spawn_entity",
//                       .summary = "Creates an entity with the given components.",
//                       .params = object_schema({{"components", {{"type", "object"}}}}, {"components"}),
//                       .result = object_schema({{"entity", protocol::entity_id_schema()}}, {"entity"}),
//                       .flags = method_flags::world_bound | method_flags::mutating,
//                       .handler = spawn_entity});
//        }
//        }  // namespace ecsd::net
//
//   2. Declare register_entity_methods in methods/methods.hpp and call it from
//      register_all_methods() in methods/all_methods.cpp.
//   3. Add the file to the ecsd_methods sources in server/net/CMakeLists.txt.
//
// Rules the dispatcher enforces so handlers never repeat them:
//   - params are an object (absent params count as {}) that conforms to `params`;
//   - with a token configured, only methods flagged pre_auth run before server.auth;
//   - with --read-only, methods flagged mutating or admin are refused (unauthorized);
//   - world_bound methods get a `world` string param added to their schema (default "default"),
//     the world is resolved (no_such_world otherwise) and the handler runs on its strand, between
//     two ticks, so it is atomic with respect to ticks and other requests to that world;
//   - other methods run on the calling connection's strand and get ctx.caller;
//   - in_slices methods (world.step) are called repeatedly with params.ticks cut into slices.
// Errors: throw protocol::rpc_error(reason, message, data) or ecs::ecs_error; any other
// exception becomes reason "internal" and is logged.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecsd/protocol/errors.hpp"
#include "ecsd/protocol/json_schema.hpp"

namespace ecsd::world {
class world;
}

namespace ecsd::net {

class hosted_world;
struct server_services;
struct session;

/// @brief Flags of a method; combine with |.
enum class method_flags : std::uint32_t {
    none = 0,
    read_only = 1U << 0,    ///< changes nothing
    mutating = 1U << 1,     ///< changes a world
    admin = 1U << 2,        ///< changes the server (worlds created or destroyed, ...)
    world_bound = 1U << 3,  ///< runs on the strand of params.world
    pre_auth = 1U << 4,     ///< may be called before server.auth
    /// world_bound methods with an integer params.ticks: the connection runs them as several
    /// calls of at most a few milliseconds each, each journaled with its own `ticks`, so a long
    /// run never holds a thread or the world's strand (other requests and ticks run in between).
    in_slices = 1U << 5,
    /// answers once, then keeps sending notifications on the connection (world.watch); the
    /// connection lets them out only after that answer
    opens_stream = 1U << 6,
    /// its params hold a secret (server.auth's token): never logged, shown to server.monitor or
    /// kept in server.slowlog, whatever their shape
    secret = 1U << 7,
    /// runs on the server's lane (world_transfers::lane: one thread of its own, one request at a
    /// time, in order) instead of a network thread: work that may take seconds (world.import's
    /// final chunk builds a whole world) never holds other connections up
    background = 1U << 8,
};

[[nodiscard]] constexpr method_flags operator|(method_flags a, method_flags b) noexcept {
    return static_cast<method_flags>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
[[nodiscard]] constexpr bool has(method_flags set, method_flags flag) noexcept {
    return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(flag)) != 0;
}
/// @brief Names of the flags that are set, for rpc.discover and logs.
[[nodiscard]] std::vector<std::string> flag_names(method_flags flags);

/// @brief What a handler receives.
struct method_context {
    const nlohmann::json& params;    ///< validated params object
    server_services& services;       ///< server-wide state (thread-safe parts only)
    hosted_world* hosted = nullptr;  ///< world_bound methods: the resolved world
    session* caller = nullptr;       ///< the calling connection (world_bound: only caller->watches)
    /// @brief A hot handler may write its result here as JSON text (ecs::json_text) instead of
    /// returning it; when this is not empty the returned json is ignored. The dispatcher takes it
    /// only from a handler that returned, so a throw midway leaves no half-written result.
    std::string raw_result = {};
    /// @brief An expected error (an entity that does not exist), reported without throwing: set by
    /// fail(). A handler that fails returns at once; what it wrote to raw_result is ignored.
    struct failure {
        protocol::reason why;
        std::string message;
    };
    std::optional<failure> failed = {};

    /// @brief The world of a world_bound method; call only from its handler.
    [[nodiscard]] world::world& world() const;
    /// @brief Reports an expected error: `return ctx.fail(...)` answers it as a throw would, at a
    /// fraction of the cost (no unwinding, no error object built as a tree).
    nlohmann::json fail(protocol::reason why, std::string message) {
        failed = failure{why, std::move(message)};
        return nullptr;
    }
};

/// @brief A handler: returns the JSON-RPC result or throws.
using method_handler = std::function<nlohmann::json(method_context&)>;

/// @brief One row of the table, as registered. Give all six members (gcc's -Wextra flags
/// designated initializers that leave one out).
struct method_info {
    std::string name;
    std::string summary;
    nlohmann::json params;  ///< JSON Schema of the params object
    nlohmann::json result;  ///< JSON Schema of the result (documentation only, not enforced)
    method_flags flags = method_flags::none;
    method_handler handler;
};

/// @brief A registered row with its compiled params schema.
struct method_entry : method_info {
    protocol::json_schema compiled_params;
};

/// @brief All methods, by name.
class method_table {
  public:
    /// @brief Adds a row; throws std::invalid_argument on a duplicate name, a bad schema, a
    /// missing handler or contradictory flags (read_only together with mutating or admin).
    void add(method_info info);
    /// @brief The row for a method, or nullptr.
    [[nodiscard]] const method_entry* find(std::string_view name) const noexcept;
    /// @brief Every row, in the order added.
    [[nodiscard]] const std::vector<method_entry>& methods() const noexcept { return rows_; }

  private:
    std::vector<method_entry> rows_;
    std::map<std::string, std::size_t, std::less<>> index_;
};

/// @brief Shorthand for an object schema with properties, required names and no other members.
[[nodiscard]] nlohmann::json object_schema(nlohmann::json properties = nlohmann::json::object(),
                                           const std::vector<std::string>& required = {});

}  // namespace ecsd::net
