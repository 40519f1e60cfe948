#pragma once
// One client connection, in the style of Asio's http/server `connection`: shared_from_this,
// every handler runs on the connection's own strand, one write in flight.
//
// Stages (as Redis's networking.c): read bytes into the framer, frame lines, parse, dispatch,
// buffer responses, write. Responses leave in request order: every request that answers gets a
// slot in a queue; world-bound requests fill their slot when their world's strand has run them,
// and all ready slots at the head of the queue go out together: small answers are copied into
// shared buffers, large ones (and each element of a batch) are moved into the output queue as they
// are and leave in one gathered write, so an answer exists once and is freed as soon as the
// socket has taken it.
//
// Memory is bounded by the answers, not the requests: a connection holds at most about
// --max-output-bytes of answers (plus one answer). Past that it parses no more lines, reads no
// more bytes and runs no more jobs until the client has read; one job batch is in flight at a
// time and stops where its budget ends. A batch (JSON-RPC array) must leave whole, so its
// elements past the bound are answered too_large without running. World jobs run in slices of a
// few milliseconds so ticks and other connections go on; a connection that is gone stops them.

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
#include "rpc/dispatcher.hpp"
#include "rpc/job_runner.hpp"
#include "rpc/output_budget.hpp"
#include "rpc/session.hpp"

namespace ecsd::net {

class connection_manager;
struct server_services;

/// @brief A client connection.
class connection : public std::enable_shared_from_this<connection> {
  public:
    /// @brief Wraps an accepted socket whose executor is a strand of its own.
    connection(asio::ip::tcp::socket socket, server_services& services, dispatcher& dispatch,
               connection_manager& manager, std::uint64_t id);
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
    // A response position in request order. A batch fills one part per element.
    struct slot {
        std::string text;                // the finished line without newline; empty: nothing to send
        std::vector<std::string> parts;  // a batch: its answers, sent as [a,b,...] (empty ones skipped)
        std::uint32_t pending = 0;
        bool batch = false;
        std::size_t bytes = 0;           // bytes held in text and parts (counted in held_bytes_)
        std::uint32_t watch_starts = 0;  // world.watch answers in it: their notifications may follow
    };
    struct pending_job {
        world_job job;
        std::uint64_t seq = 0;  // slot sequence number, meaningless when !has_slot
        std::size_t part = 0;
        bool has_slot = false;
        bool in_batch =
            false;  // answers one element of a JSON-RPC batch (the whole batch leaves as one line)
    };
    // Jobs for one world, run in order on its strand by run_batch(), possibly over several posts.
    struct job_batch {
        std::vector<pending_job> jobs;
        std::vector<job_result> results;  // one per job run so far, in order
        std::size_t budget = 0;           // answer bytes this batch may produce before it stops
        std::size_t spent = 0;
        bool head_may_run = false;  // the first job may run even with no budget (nothing ahead of it)
        job_runner runner;          // the job in progress (a long world.step runs in slices)
        bool mutated = false;       // a job changed the world since the last publish
        std::vector<std::pair<std::uint64_t, std::size_t>> batch_bytes;  // JSON-RPC batch slot -> bytes
    };

    void do_read();
    void on_read(const asio::error_code& ec, std::size_t n);
    void pump();  // parse what can be parsed, submit jobs, write, read: after any progress
    void process_lines();
    void handle_line(std::string_view line);
    std::uint64_t push_slot(slot s);
    [[nodiscard]] std::size_t buffered_bytes() const noexcept;
    [[nodiscard]] bool has_room() const noexcept;
    void note_input_state(bool completed_a_line);

    void take_notifications();                // world.watch notifications -> out_, while there is room
    std::string& out_tail();                  // the last buffer of out_, if it may still grow, else a new one
    void append_out(std::string_view bytes);  // copied into out_tail()
    void push_out(std::string&& text);        // small: copied; large: moved in as a buffer of its own
    void submit_jobs();
    static void run_batch(std::shared_ptr<connection> self, std::unique_ptr<job_batch> batch);
    void on_jobs_done(std::unique_ptr<job_batch> batch);
    void complete(std::uint64_t seq, std::size_t part, std::optional<std::string> text);
    void move_ready();  // ready slots at the head -> out_
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
    protocol::parse_limits parse_limits_;

    std::deque<slot> slots_;
    std::uint64_t first_seq_ = 0;   // sequence number of slots_.front()
    std::size_t held_bytes_ = 0;    // answer bytes waiting in slots_
    std::deque<pending_job> jobs_;  // parsed world jobs not yet run, in request order
    std::vector<std::unique_ptr<job_batch>> spare_batches_;  // recycled job_batch objects
    bool batch_in_flight_ = false;     // one job_batch at a time: answers stay bounded and in order
    std::atomic<bool> closed_{false};  // read by run_batch on world strands: stop computing

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
