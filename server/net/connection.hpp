#pragma once
// One client connection, in the style of Asio's http/server `connection`: shared_from_this,
// every handler runs on the connection's own strand, one write in flight.
//
// Stages (as Redis's networking.c): read bytes into the framer, frame lines, parse, dispatch,
// buffer responses, write. Responses leave in request order: every request that answers gets a
// slot in a queue; world-bound requests fill their slot when their world's strand has run them,
// and all ready slots at the head of the queue go out in ONE write.

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <asio.hpp>

#include "dispatcher.hpp"
#include "ecsd/protocol/framer.hpp"
#include "session.hpp"

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

private:
    // A response position in request order. A batch fills one part per element.
    struct slot {
        std::string text;  // the finished line without newline; empty: nothing to send
        std::vector<std::string> parts;
        std::uint32_t pending = 0;
        bool batch = false;
    };
    struct pending_job {
        world_job job;
        std::uint64_t seq;  // slot sequence number, meaningless when !has_slot
        std::size_t part;
        bool has_slot;
    };

    void do_read();
    void on_read(const asio::error_code& ec, std::size_t n);
    void process_lines();
    void handle_line(std::string_view line);
    std::uint64_t push_slot(slot s);
    struct job_batch {
        std::vector<pending_job> jobs;
        std::vector<job_result> results;
    };

    void submit_jobs();
    void on_jobs_done(std::unique_ptr<job_batch> batch);
    void complete(std::uint64_t seq, std::size_t part, std::optional<std::string> text);
    bool move_ready();  // ready slots -> out_; false when the connection was closed (slow reader)
    void flush();       // move_ready() and start a write when none is in flight
    void do_write();
    void on_write(const asio::error_code& ec);
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
    std::uint64_t first_seq_ = 0;  // sequence number of slots_.front()
    std::vector<pending_job> jobs_;
    std::vector<std::unique_ptr<job_batch>> spare_batches_;  // recycled job_batch objects
    std::size_t jobs_in_flight_ = 0;  // posted to a world, not yet back (notifications included)

    std::string out_;      // ready responses not yet handed to the socket
    std::string writing_;  // the buffer of the write in flight
    bool write_in_flight_ = false;
    bool reading_ = false;
    bool draining_ = false;  // no more reads: answer what is in flight, then close
    bool lingering_ = false;  // FIN sent, discarding input until the client closes
    bool stopped_ = false;
    std::string close_reason_ = "closed";
    std::chrono::steady_clock::time_point last_activity_;
    std::uint64_t requests_ = 0;
};

}  // namespace ecsd::net
