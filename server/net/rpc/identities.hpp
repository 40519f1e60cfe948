#pragma once
// Who a connection is, and what it may call. A --tokens file names identities: one line per token,
// `SHA256_HEX IDENTITY ROLE`, `#` starting a comment. The file holds no token, only its SHA-256
// (`ecsd --hash-token TOKEN` prints it), so it can be committed with a deployment. The single
// --token still works and means the admin.
//
// A role decides which methods run, from each method's flags alone (role_may_call), so a new method
// cannot slip past it: admin calls everything; observer and player call read_only methods that are
// not operator_only (other connections' requests, saves to disk), and pre_auth ones (server.auth);
// a player also calls action methods (world.call_action: game logic that checks its caller).
// The file is reloaded on SIGHUP; a connection whose token the new file no longer holds must
// authenticate again, and one whose role changed has the new role from its next request.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpc/method_table.hpp"

namespace ecsd::net {

/// @brief What an identity may do.
enum class role : std::uint8_t { admin, observer, player };

/// @brief "admin", "observer" or "player".
[[nodiscard]] std::string_view role_name(role r) noexcept;
/// @brief The role of that name, if it is one.
[[nodiscard]] std::optional<role> role_from(std::string_view name) noexcept;
/// @brief Whether a connection of role `r` may call a method with these flags.
[[nodiscard]] bool role_may_call(role r, method_flags flags) noexcept;

/// @brief SHA-256 of `text`, as 64 lowercase hex digits (a --tokens file's first column).
[[nodiscard]] std::string sha256_hex(std::string_view text);

/// @brief An identity: a name and a role.
struct identity {
    std::string name;
    role what = role::player;
};

/// @brief The identities of a --tokens file.
class identity_table {
  public:
    /// @brief Reads a tokens file's text; throws std::runtime_error naming `where` and the line of
    /// the first mistake (a hash that is not 64 hex digits, an unknown role, a hash given twice).
    [[nodiscard]] static identity_table parse(std::string_view text, std::string_view where);
    /// @brief Reads the file at `path` (parse()); throws std::runtime_error when it cannot be read.
    [[nodiscard]] static identity_table load(const std::string& path);

    /// @brief The identity of the token whose SHA-256 is `hash` (lowercase hex). Every entry is
    /// compared, each in constant time, so how long it takes says nothing of which one matched.
    [[nodiscard]] std::optional<identity> find(std::string_view hash) const;
    /// @brief Tokens in the table.
    [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

  private:
    struct entry {
        std::string hash;
        identity who;
    };
    std::vector<entry> entries_;
};

/// @brief The server's identity table, replaced whole on reload. Thread-safe.
class identity_store {
  public:
    /// @brief Replaces the table; connections check their token against it at their next request.
    void set(identity_table table);
    /// @brief As identity_table::find, on the current table.
    [[nodiscard]] std::optional<identity> find(std::string_view hash) const;
    /// @brief Bumped by every set(): a session authenticated under another generation checks again.
    [[nodiscard]] std::uint64_t generation() const noexcept {
        return generation_.load(std::memory_order_acquire);
    }

  private:
    mutable std::mutex mutex_;
    identity_table table_;
    std::atomic<std::uint64_t> generation_{0};
};

}  // namespace ecsd::net
