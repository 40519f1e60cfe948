#include "rpc_client.hpp"

#include <algorithm>

#include "ecsd/protocol/jsonrpc.hpp"
#include "errors.hpp"

namespace ecsd::cli {

json rpc_client::call(std::string_view method, const json& params) {
    const auto deadline = connection::clock::now() + options_.timeout;
    try {
        if (conn_ && conn_->peer_has_closed()) {
            // The server hung up while we were quiet (--idle-timeout, a restart): nothing of this
            // call has left yet, so it is safe to connect again and send it there.
            conn_.reset();
            notifications_.clear();
            if (on_reconnect) on_reconnect(peer() + " had closed the idle connection; reconnected");
        }
        if (!conn_) {
            conn_ = std::make_unique<connection>(options_.host, options_.port, deadline);
            if (options_.token) {
                try {
                    round_trip("server.auth", {{"token", *options_.token}}, deadline);
                } catch (const server_error&) {
                    conn_.reset();  // not authenticated: never send anything else on it
                    throw;
                }
            }
        }
        return round_trip(method, params, deadline);
    } catch (const connection_error&) {
        conn_.reset();  // the next call starts over with a fresh connection
        notifications_.clear();
        throw;
    }
}

void rpc_client::keep_notification(json& message) {
    const auto params = message.find("params");
    if (params == message.end()) {
        return;
    }
    if (notifications_.size() >= max_kept_notifications) {
        notifications_.pop_front();
    }
    notifications_.push_back(std::move(*params));
}

std::optional<json> rpc_client::next_notification(connection::clock::time_point deadline) {
    if (!notifications_.empty()) {
        json next = std::move(notifications_.front());
        notifications_.pop_front();
        return next;
    }
    if (!conn_) {
        throw connection_error("not connected to " + peer());
    }
    try {
        for (;;) {
            const auto line = conn_->read_line_before(deadline);
            if (!line) {
                return std::nullopt;
            }
            auto message = json::parse(*line, nullptr, /*allow_exceptions=*/false);
            if (message.is_discarded() || !message.is_object()) {
                throw connection_error("malformed message from " + conn_->peer() + ": " +
                                       line->substr(0, 200));
            }
            if (message.contains("id")) {
                continue;  // an answer nobody waits for any more
            }
            if (const auto params = message.find("params"); params != message.end()) {
                return std::move(*params);
            }
        }
    } catch (const connection_error&) {
        conn_.reset();
        notifications_.clear();
        throw;
    }
}

json rpc_client::round_trip(std::string_view method, const json& params,
                            connection::clock::time_point deadline) {
    const std::int64_t id = next_id_++;
    conn_->write_line(protocol::make_request(id, method, params), deadline);
    for (;;) {
        const std::string line = conn_->read_line(deadline);
        auto response = json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (line.starts_with("HTTP/")) {
            // ecsd's HTTP port (or any web server) refuses a JSON line with a status line: the port
            // is the likely mistake (`world move --to HOST:7778`), so say so rather than "malformed".
            std::string status = line.substr(0, std::min<std::size_t>(line.find_first_of("\r\n"), 80));
            throw connection_error(conn_->peer() + " answered HTTP (" + status +
                                   "), not JSON-RPC lines: is this the HTTP port? ecsd takes JSON-RPC on its "
                                   "--port (7777 by default), HTTP on --http-port (7778)");
        }
        if (response.is_discarded() || !response.is_object()) {
            throw connection_error("malformed response from " + conn_->peer() + ": " + line.substr(0, 200));
        }
        const auto it = response.find("id");
        if (it == response.end()) {
            keep_notification(response);  // a notification (world.watch), not an answer
            continue;
        }
        const bool ours = it->is_number_integer() && it->get<std::int64_t>() == id;
        const bool orphan_error = it->is_null() && response.contains("error");
        if (!ours && !orphan_error) {
            continue;  // a stale answer to an earlier, timed-out request
        }
        if (const auto error = response.find("error"); error != response.end()) {
            server_error failure(*error);
            // An error that answers no request (id null: the server gave up on the line, e.g. too_large
            // or the connection limit) may be followed by the server hanging up: start over next time.
            if (!ours) {
                conn_.reset();
            }
            throw failure;
        }
        const auto result = response.find("result");
        if (result == response.end()) {
            throw connection_error("response from " + conn_->peer() + " has neither result nor error");
        }
        return *result;
    }
}

}  // namespace ecsd::cli
