#pragma once
// One client connection, in the style of Asio's http/server `connection`: shared_from_this,
// every handler runs on the connection's own strand, one write in flight.
//
// The TCP face: it only frames bytes. Lines come out of the framer and go into the connection's
// request_pipeline (rpc/request_pipeline.hpp), which parses, refuses, queues for the world and keeps
// the answers in request order; the ready answers at its head, and world.watch notifications
// between them, go out in gathered writes: small answers are copied into shared buffers, large
// ones (and each element of a batch) are moved into the output queue as they are, so an answer
// exists once and is freed as soon as the socket has taken it.
//
// A WebSocket client (RFC 6455) upgraded on the HTTP port is handed over here and served the same
// way: one JSON-RPC text per message instead of per line (protocol/ws_framer.hpp), answers and
// notifications framed as text messages (a shared notification body still goes out uncopied, after
// a header of its own), ping answered with pong, and a close frame before the connection closes.
//
// Memory is bounded by the answers, not the requests: a connection holds at most about
// --max-output-bytes of answers (plus one answer). Past that it frames no more lines, reads no
// more bytes and runs no more jobs until the client has read.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <asio.hpp>

#include "ecsd/protocol/framer.hpp"
#include "ecsd/protocol/ws_framer.hpp"
#include "rpc/output_budget.hpp"
#include "rpc/request_pipeline.hpp"
#include "rpc/session.hpp"

namespace ecsd::net {

class connection_manager;
class watch_bytes;
struct server_services;

/// @brief A client connection.
class connection : public std::enable_shared_from_this<connection> {
  public:
    /// @brief Wraps an accepted socket whose executor is a strand of its own.
    /// `websocket`: a client the HTTP face upgraded (its 101 answer is written first).
    connection(asio::ip::tcp::socket socket, server_services& services, dispatcher& dispatch,
               connection_manager& manager, std::uint64_t id,
               std::optional<websocket_handover> websocket = std::nullopt);
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// @brief Starts reading; call once, after the manager holds the connection.
    void start();
    /// @brief Closes now, dropping unanswered requests. Safe from any thread.
    void stop();
    /// @brief Stops reading, answers what is in flight, then closes. Safe from any thread.
    void shutdown();

    /// @brief The connection number used in logs.
    [[nodiscard]] std::uint64_t id() const noexcept { return session_.id; }

    /// @brief Closes a connection that is stalled mid-request, to make room for a new one at
    /// the connection limit (slowloris). Safe from any thread.
    void evict();

    /// @brief Steady-clock nanoseconds since the current unfinished request line began, or since
    /// the connection opened if it has never sent a complete line; 0 when it is not stalled on
    /// input. Read by the connection manager from other threads.
    [[nodiscard]] std::int64_t stalled_since() const noexcept {
        return stalled_since_.load(std::memory_order_relaxed);
    }

  private:
    void do_read();
    void on_read(const asio::error_code& ec, std::size_t n);
    void pump();  // parse what can be parsed, submit jobs, write, read: after any progress
    void process_lines();
    void process_messages();                       // the WebSocket framing of process_lines
    void frame_notifications(watch_bytes& taken);  // WebSocket: one text message per notification
    [[nodiscard]] std::size_t buffered_bytes() const noexcept;
    [[nodiscard]] bool has_room() const noexcept;
    void note_input_state(bool completed_a_line);

    void take_notifications();                // world.watch notifications -> out_, while there is room
    std::string& out_tail();                  // the last buffer of out_, if it may still grow, else a new one
    void append_out(std::string_view bytes);  // copied into out_tail()
    void push_out(std::string&& text);        // small: copied; large: moved in as a buffer of its own
    void submit_jobs();
    void move_ready();  // ready answers at the head of the pipeline -> out_
    void flush();       // move_ready() and start a write when none is in flight
    void do_write();
    void write_some();
    void on_write(const asio::error_code& ec, std::size_t n);
    void note_output(bool moved);  // tells --max-output-total what this connection holds unsent
    void arm_idle_timer();
    void on_idle(const asio::error_code& ec);
    void begin_drain(std::string_view why);
    void maybe_finish();
    void linger();
    void discard_input();
    void close(std::string_view why);

    asio::ip::tcp::socket socket_;
    asio::any_io_executor strand_;
    asio::steady_timer idle_timer_;
    server_services& services_;
    dispatcher& dispatch_;
    connection_manager& manager_;
    session session_;
    protocol::line_framer framer_;
    std::optional<protocol::ws_framer> ws_;  // set: a WebSocket connection, framed by messages
    std::uint16_t ws_close_code_ = 1000;     // the close frame sent before closing
    std::string ws_close_reason_;
    bool ws_close_sent_ = false;
    std::string preface_;        // written before anything else (a WebSocket's 101 answer)
    request_pipeline pipeline_;  // every line's request, from parse to answer

    // Ready bytes in order, not yet written, in buffers: text of our own, or a watch diff's body
    // shared with every connection that sends it. The first `in_flight_` are those of the write
    // in flight: they must not change until it completes. A buffer is freed (or kept as spare_
    // when small) as soon as it has been written.
    struct out_buffer {
        std::string text;
        std::shared_ptr<const std::string> shared;  // set: bytes shared with other connections
        [[nodiscard]] const char* data() const noexcept { return shared ? shared->data() : text.data(); }
        [[nodiscard]] std::size_t size() const noexcept { return shared ? shared->size() : text.size(); }
    };
    std::deque<out_buffer> out_;
    std::size_t out_bytes_ = 0;      // bytes in out_ not yet written
    std::size_t out_front_pos_ = 0;  // bytes of out_.front() already written
    std::size_t in_flight_ = 0;
    std::string spare_;                       // a small written buffer kept for reuse
    std::array<asio::const_buffer, 64> iov_;  // the write in flight (asio gathers at most 64)
    bool write_in_flight_ = false;
    bool reading_ = false;
    bool draining_ = false;   // no more reads: answer what is in flight, then close
    bool lingering_ = false;  // FIN sent, discarding input until the client closes
    bool stopped_ = false;
    std::string close_reason_ = "closed";
    std::chrono::steady_clock::time_point last_activity_;  // bytes read or written
    std::chrono::steady_clock::time_point
        partial_since_;      // the unfinished line began (or the connection opened)
    bool partial_ = false;   // an unfinished line (or nothing yet) is waiting for bytes
    bool any_line_ = false;  // a complete line has arrived
    std::chrono::steady_clock::time_point opened_;
    std::chrono::steady_clock::time_point timer_deadline_ =
        std::chrono::steady_clock::time_point::max();  // max: unarmed
    std::atomic<std::int64_t> stalled_since_{0};
    std::uint64_t requests_ = 0;
    std::shared_ptr<output_budget::account> output_account_;
};

}  // namespace ecsd::net
