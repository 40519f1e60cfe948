#pragma once
// One HTTP/1.1 client of the HTTP face. Parsing is request_parser (Debian's http-parser, without
// sockets); this class only routes what it reports:
//
//   GET  /               the viewer page (one self-contained HTML file built into ecsd)
//   POST /               a JSON-RPC request or batch, answered exactly as on the TCP port
//   POST / with world.watch or a +watch method: Server-Sent Events, the answer first, then one
//                        event per notification, until the client goes away or the watch ends
//   GET  /ws             a WebSocket upgrade (RFC 6455): answered 101, and the socket is handed to
//                        the TCP face's connection, which serves it by messages as it serves lines
//
// One request at a time per connection (pipelined requests wait in the parser, paused), keep-alive
// unless the client says otherwise. The TCP limits apply: --max-line-bytes for a body (413),
// 16 KiB of request line and headers (431), --idle-timeout, --request-timeout for a request's
// headers and body, --max-output-bytes for what an SSE reader has not read and for a batch's
// answer, --preauth-line-bytes for a body sent without the token.
//
// Web pages of other sites must not drive it (docs/http.md): a request is judged on its headers,
// before its body is read. Its Host must name this server (DNS rebinding), its Origin, when sent,
// must be this server's own or allowed, and a POST from a page must be application/json, which
// no cross-site form or simple fetch can send.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <asio.hpp>

#include "http/request_parser.hpp"
#include "rpc/output_budget.hpp"
#include "rpc/request_pipeline.hpp"
#include "rpc/session.hpp"

namespace ecsd::net {

class http_server;
struct server_services;

/// @brief Whether an event stream's event (one JSON text) is its last: a world.watch notification
/// whose params hold "ended": true, or a +watch stream's closing error response. Decided from the
/// envelope's members, never from what the world's data holds.
[[nodiscard]] bool ends_event_stream(std::string_view line);

/// @brief An HTTP client connection.
class http_connection : public std::enable_shared_from_this<http_connection> {
  public:
    http_connection(asio::ip::tcp::socket socket, server_services& services, dispatcher& dispatch,
                    http_server& owner, std::uint64_t id);
    http_connection(const http_connection&) = delete;
    http_connection& operator=(const http_connection&) = delete;

    /// @brief Starts reading. Safe from any thread.
    void start();
    /// @brief Closes now. Safe from any thread.
    void stop();
    /// @brief At the connection limit: closes it to make room, if it is still idle (between
    /// requests, nothing owed) or stalled in the middle of a request. Safe from any thread.
    void evict();

    /// @brief Steady-clock nanoseconds since it has been idle: open with no request begun and
    /// nothing owed (keep-alive between requests, or silent since it connected); 0 when it is not.
    /// Read by http_server from other threads.
    [[nodiscard]] std::int64_t idle_since() const noexcept {
        return idle_since_.load(std::memory_order_relaxed);
    }
    /// @brief Steady-clock nanoseconds since the request still arriving began; 0 when none is.
    [[nodiscard]] std::int64_t stalled_since() const noexcept {
        return stalled_since_.load(std::memory_order_relaxed);
    }

  private:
    void do_read();
    void on_read(const asio::error_code& ec, std::size_t n);
    void parse();
    bool check_head();  // false: the request was refused (answered, and the connection closes)
    bool authorize();   // the token; false: refused (answered)
    void refuse(int status, std::string_view why);
    void handle();
    void handle_rpc();
    void upgrade_websocket();  // GET /ws
    void hand_over();          // the 101 answer and the socket go to the TCP face's connection
    void advance_rpc();        // the request's jobs run, or its answer goes out once ready
    void note_idle(bool idle);
    void finish_rpc(request_pipeline::answer a);
    void start_stream(std::string first);
    void pump_stream();
    void respond(int status, std::string_view content_type, std::string_view body,
                 std::string_view extra_headers = {});
    void fail(int status, std::string_view message);  // respond, then close
    void write(std::string_view bytes);
    void do_write();
    void on_write(const asio::error_code& ec, std::size_t n);
    void note_output(bool moved);  // tells --max-output-total what this connection holds unsent
    void after_response();
    void arm_timer();
    void on_timer(const asio::error_code& ec);
    void linger();
    void close(std::string_view why);
    [[nodiscard]] std::size_t unsent() const noexcept { return out_.size() + (writing_.size() - write_pos_); }

    asio::ip::tcp::socket socket_;
    asio::any_io_executor strand_;
    asio::steady_timer timer_;
    server_services& services_;
    dispatcher& dispatch_;
    http_server& owner_;
    session session_;

    request_parser parser_;
    std::string in_;  // bytes read and not yet parsed

    request_pipeline pipeline_;  // the body's request, from parse to answer
    bool keep_alive_ = true;
    bool busy_ = false;       // a request is being answered
    bool streaming_ = false;  // the connection is an SSE stream now
    int refusal_ = 0;         // nonzero: the head was refused; answer this once the body is in
    std::string refusal_why_;
    bool head_authorized_ = false;                  // the token was checked on the head (a large body)
    std::unique_ptr<websocket_handover> handover_;  // an upgrade waiting for earlier answers to be written

    std::string out_;
    std::string writing_;
    std::size_t write_pos_ = 0;
    bool write_in_flight_ = false;
    bool reading_ = false;
    bool stopped_ = false;
    bool close_after_write_ = false;
    std::chrono::steady_clock::time_point last_activity_;
    std::chrono::steady_clock::time_point request_began_;
    bool request_open_ = false;  // bytes of a request arrived, its message is not complete
    std::shared_ptr<std::function<void()>> lingering_read_;
    std::shared_ptr<output_budget::account> output_account_;
    std::atomic<std::int64_t> idle_since_{0};
    std::atomic<std::int64_t> stalled_since_{0};
};

}  // namespace ecsd::net
