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
//        method_answer spawn_entity(method_context& ctx) {
//            auto& world = ctx.world();                  // world-bound: runs on that world's strand
//            const auto& params = ctx.params;            // already validated against `params` below
//            if (...) return method_answer::error(reason::..., "why");  // an expected error
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
// Errors: a handler returns method_answer::error; what the core throws below it (ecs::ecs_error,
// persist::storage_error, protocol::rpc_error) is answered with its reason; any other exception
// becomes reason "internal" and is logged.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecsd/protocol/errors.hpp"
#include "ecsd/protocol/json_schema.hpp"

namespace ecsd::protocol {
struct entity_read;  // ecsd/protocol/jsonrpc.hpp
}

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
    /// read_only, so --read-only allows it, but for the admin role only (rpc/identities.hpp): what
    /// it shows or does concerns the server, not a game (other connections' requests, disk writes)
    operator_only = 1U << 9,
    /// a game action (world.call_action): the player role may call it although it is mutating;
    /// the dispatcher adds params.caller, the caller's identity, before the request is journaled
    /// (so a replay runs it as the same caller), and holds players to --action-rate
    action = 1U << 10,
    /// read_only and world_bound, and its handler answers from method_context::read when the
    /// parser read the params as a protocol::entity_read (world.get_components: the hottest read).
    /// An implementation detail, not listed among a method's flags.
    entity_read = 1U << 11,
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
    /// method_flags::entity_read methods: the params read typed, in place of `params` (then null)
    const protocol::entity_read* read = nullptr;

    /// @brief The world of a world_bound method; call only from its handler.
    [[nodiscard]] world::world& world() const;
};

/// @brief A handler's one way to answer: its result, as a JSON tree (`return {{"entity", id}};`) or
/// as JSON text a hot handler wrote (method_answer::text, e.g. through ecs::json_text: no tree built
/// only to be serialised), or an expected error (method_answer::error: no unwinding, at a fraction of
/// a throw's cost). The envelope around it is written by protocol/, never by a handler. Errors raised
/// below the handler (the core's ecs_error, a disk's storage_error) arrive as exceptions and become
/// the same error answers in the dispatcher.
class method_answer {
  public:
    /// @brief A result tree: `return tree;`, `return {{"key", value}};`.
    method_answer(nlohmann::json result)
        : value_(std::move(result)) {}  // NOLINT(google-explicit-constructor)
    /// @brief A result tree written in place: `return {{"a", 1}, {"b", 2}};`.
    method_answer(nlohmann::json::initializer_list_t init)
        : value_(init) {}  // NOLINT(google-explicit-constructor)
    /// @brief A result already written as JSON text.
    [[nodiscard]] static method_answer text(std::string json_text) {
        method_answer a;
        a.text_ = std::move(json_text);
        return a;
    }
    /// @brief An expected error: answered with `why`'s wire reason, `message`, and `data`'s members.
    [[nodiscard]] static method_answer error(protocol::reason why, std::string message,
                                             nlohmann::json data = nullptr) {
        method_answer a;
        a.error_ = failure{why, std::move(message), std::move(data)};
        return a;
    }

    struct failure {
        protocol::reason why;
        std::string message;
        nlohmann::json data;
    };
    /// @brief The expected error, if it is one.
    [[nodiscard]] const std::optional<failure>& failed() const noexcept { return error_; }
    /// @brief The result as text; empty when it is a tree (value()).
    [[nodiscard]] std::string& text() noexcept { return text_; }
    /// @brief The result tree (null when the result is text or an error).
    [[nodiscard]] nlohmann::json& value() noexcept { return value_; }

  private:
    // A null tree. (`method_answer a{nlohmann::json()}` was the initializer-list constructor: a tree
    // `[null]`, two allocations made and a third to destroy it, on every answer given as text.)
    method_answer() = default;

    nlohmann::json value_;
    std::string text_;
    std::optional<failure> error_;
};

/// @brief A handler: answers its request (method_answer).
using method_handler = std::function<method_answer(method_context&)>;

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
    /// @brief The method with method_flags::entity_read (at most one), or empty: what the request
    /// pipeline asks the parser to read typed (protocol::parse_limits::entity_read_method).
    [[nodiscard]] std::string_view entity_read_method() const noexcept { return entity_read_name_; }

  private:
    /// Hashes a name once, where an ordered map compared it with about seven of the ~100 names,
    /// most of which begin "world." (memcmp was 7% of a world.get_components' trip through the
    /// pipeline, this among the rest).
    struct name_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    std::vector<method_entry> rows_;
    std::string entity_read_name_;
    std::unordered_map<std::string, std::size_t, name_hash, std::equal_to<>> index_;
};

/// @brief Shorthand for an object schema with properties, required names and no other members.
[[nodiscard]] nlohmann::json object_schema(nlohmann::json properties = nlohmann::json::object(),
                                           const std::vector<std::string>& required = {});

}  // namespace ecsd::net
