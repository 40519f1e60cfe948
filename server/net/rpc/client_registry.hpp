#pragma once
// Who is connected, for server.clients (the viewer shows it to an admin): one row per open
// connection of every face, with its identity and role. A connection writes its own row (when it
// opens, authenticates, or its role changes on a reload) from its strand; server.clients reads a
// copy of all rows. Thread-safe; as large as the connections open (--max-connections bounds it).
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "rpc/session.hpp"

namespace ecsd::net {

class client_registry {
  public:
    using clock = std::chrono::steady_clock;
    /// @brief A connection opened (or changed who it is): its row, as the session says now.
    void update(const session& s) {
        const std::lock_guard lock(mutex_);
        auto& r = rows_[{s.face, s.id}];
        if (r.since == clock::time_point{}) r.since = clock::now();
        r.peer = s.peer;
        r.identity = s.authenticated ? s.identity : std::string();
        r.role = s.authenticated ? std::string(role_name(s.who)) : std::string();
    }
    /// @brief A connection closed.
    void remove(const session& s) {
        const std::lock_guard lock(mutex_);
        rows_.erase({s.face, s.id});
    }
    /// @brief Every open connection: face, id, peer, identity and role (null until it
    /// authenticated), seconds connected.
    [[nodiscard]] nlohmann::json list() const {
        const auto now = clock::now();
        nlohmann::json out = nlohmann::json::array();
        const std::lock_guard lock(mutex_);
        for (const auto& [key, r] : rows_) {
            out.push_back({{"face", key.first},
                           {"id", key.second},
                           {"peer", r.peer},
                           {"identity", r.identity.empty() ? nlohmann::json() : nlohmann::json(r.identity)},
                           {"role", r.role.empty() ? nlohmann::json() : nlohmann::json(r.role)},
                           {"connected_s", std::chrono::duration<double>(now - r.since).count()}});
        }
        return out;
    }

  private:
    struct entry {
        std::string peer;
        std::string identity;
        std::string role;
        clock::time_point since{};
    };
    mutable std::mutex mutex_;
    std::map<std::pair<std::string, std::uint64_t>, entry> rows_;
};

}  // namespace ecsd::net
