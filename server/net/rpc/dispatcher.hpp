#pragma once
// The one place that turns a parsed request into a response, in the style of Redis's
// processCommand: look the method up, check auth and flags, validate params against the
// table's schema, resolve params.world, and run the handler — inline for server methods, or
// as a job the connection posts onto the world's strand for world-bound methods.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ecsd/protocol/jsonrpc.hpp"
#include "rpc/method_table.hpp"

namespace ecsd::net {

class hosted_world;
struct server_services;
struct session;

/// @brief A world-bound request waiting to run on its world's strand.
struct world_job {
    std::shared_ptr<hosted_world> world;
    const method_entry* method = nullptr;
    nlohmann::json id;
    nlohmann::json params;
    bool notification = false;
    std::uint64_t connection = 0;  ///< for logs
    session* caller = nullptr;     ///< the calling connection; world handlers may read only caller->watches
    std::optional<protocol::entity_read> read;  ///< the params, read typed (then `params` is null)

    /// @brief The typed params, or null: what method_context::read and note_done take.
    [[nodiscard]] const protocol::entity_read* typed_params() const noexcept {
        return read ? &*read : nullptr;
    }
};

/// @brief What a handler produced: the result, or an error object; serialised off the world strand.
struct job_result {
    nlohmann::json value;
    bool is_error = false;
    std::string text;  ///< the result as JSON text when the handler wrote it so (then value is unused)
};

/// @brief The outcome of prepare(): a finished response, a job to run, or nothing (notification).
struct prepared {
    std::optional<std::string> response;  ///< text without newline, for requests already answered
    std::optional<world_job> job;
};

/// @brief Validates and routes requests for every connection; stateless, so shared by all.
class dispatcher {
  public:
    /// @brief A dispatcher over the services' method table and worlds.
    explicit dispatcher(server_services& services) noexcept : services_(services) {}

    /// @brief On the connection's strand: answers the request or returns the world job.
    [[nodiscard]] prepared prepare(protocol::request&& req, session& caller);

    /// @brief On the job's world strand: runs the handler and captures its result or error.
    [[nodiscard]] job_result run(world_job& job);

    /// @brief Off the world strand: the response text for a finished job (nullopt: notification).
    [[nodiscard]] static std::optional<std::string> finish(const world_job& job, const job_result& result);

    /// @brief Counts a finished request for server.info's method stats and server.slowlog: `ns` of
    /// handler time (every slice of a sliced one), `params` as the client sent them.
    void note_done(const method_entry& method, const nlohmann::json& params, std::uint64_t ns, bool error,
                   std::uint64_t connection, const protocol::entity_read* read = nullptr) const;

  private:
    job_result invoke(const method_entry& method, method_context& ctx, std::uint64_t connection) const;

    server_services& services_;
};

/// @brief The message of a batch element answered too_large without running: the batch's answer
/// reached --max-output-bytes (`limit`). The TCP port's and the HTTP face's.
[[nodiscard]] std::string batch_too_large(std::size_t limit);

}  // namespace ecsd::net
