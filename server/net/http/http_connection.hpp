#pragma once
// One HTTP/1.1 client of the HTTP face. Parsing is request_parser (Debian's http-parser, without
// sockets); this class only routes what it reports:
//
//   GET  /               the viewer page (one self-contained HTML file built into ecsd)
//   POST /               a JSON-RPC request or batch, answered exactly as on the TCP port
//   POST / with world.watch or a +watch method: Server-Sent Events, the answer first, then one
//                        event per notification, until the client goes away or the watch ends
//
// One request at a time per connection (pipelined requests wait in the parser, paused), keep-alive
// unless the client says otherwise. The TCP limits apply: --max-line-bytes for a body (413),
// 16 KiB of request line and headers (431), --idle-timeout, --request-timeout for a request's
// headers and body, --max-output-bytes for what an SSE reader has not read.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio.hpp>

#include "http/request_parser.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/job_runner.hpp"
#include "rpc/session.hpp"

namespace ecsd::net {

class http_server;
struct server_services;

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

  private:
    struct rpc_part {
        std::optional<std::string> text;  // the answer (or nothing, for a notification)
        std::optional<world_job> job;     // still to run on a world
        bool opened = false;              // a watch that answered: the stream may begin
    };

    void do_read();
    void on_read(const asio::error_code& ec, std::size_t n);
    void parse();
    void handle();
    void handle_rpc();
    void run_next_job();
    void finish_rpc();
    void start_stream(std::string first);
    void pump_stream();
    void respond(int status, std::string_view content_type, std::string_view body,
                 std::string_view extra_headers = {});
    void fail(int status, std::string_view message);  // respond, then close
    void write(std::string_view bytes);
    void do_write();
    void on_write(const asio::error_code& ec, std::size_t n);
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

    std::vector<rpc_part> parts_;
    bool batch_ = false;
    std::size_t next_job_ = 0;
    job_runner runner_;
    bool keep_alive_ = true;
    bool busy_ = false;       // a request is being answered
    bool streaming_ = false;  // the connection is an SSE stream now

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
};

}  // namespace ecsd::net
