#pragma once
// One connection's requests, whichever face framed them (an NDJSON line on the TCP port, a POST
// body on the HTTP face): in the style of Redis, whose every connection goes through one
// processCommand and one family of addReply functions. A face only frames bytes and writes what
// comes out; what a request means, how it is refused, how deep the pipeline may go, how much
// answer it may hold and how it reaches its world are decided here, once.
//
// Answers leave in request order. Every request that answers gets a slot in a queue; one answered
// at once (a parse error, a server method) fills it then, a world-bound one when its world's
// strand has run it. A batch (JSON-RPC array) has one slot with a part per element and leaves
// whole, so once its answers reach --max-output-bytes the rest of its elements are answered
// too_large without running.
//
// The world hop: consecutive jobs for one world travel together, one post there and one back
// however deep the pipeline, one batch of jobs in flight at a time. A batch of jobs may produce
// only the answer bytes the output bound has room for (the rest waits until the client has read),
// runs in slices of a few milliseconds so ticks and other connections go on, and stops computing
// once its connection is gone.
//
// Threads: everything but run_batch() runs on the face's strand (`home`); run_batch() runs on a
// world's strand and touches only its own job batch and `closed_`.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <asio.hpp>

#include "ecsd/protocol/jsonrpc.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/job_runner.hpp"
#include "rpc/session.hpp"

namespace ecsd::net {

struct server_services;

/// @brief A connection's requests from framed text to answers in order.
class request_pipeline {
  public:
    /// @brief A finished answer at the head of the queue, for the face to write.
    struct answer {
        std::string text;                ///< one request's answer; empty: nothing to send
        std::vector<std::string> parts;  ///< a batch's answers in order (empty ones: notifications)
        bool batch = false;
        std::uint32_t watch_starts = 0;  ///< world.watch answers in it: their notifications may follow
    };

    /// @brief A pipeline for the connection of `caller`, whose strand is `home`. `resume` runs on
    /// `home` when a batch of jobs is back: answers may be ready and room may have opened.
    request_pipeline(server_services& services, dispatcher& dispatch, session& caller,
                     asio::any_io_executor home, std::function<void()> resume);

    /// @brief One framed request (a line, a body): parsed, answered or queued for its world.
    void submit(std::string_view text);
    /// @brief An answer of the face's own (a line too long, a timeout), in request order.
    void answer_now(std::string text);

    /// @brief Whether the face may frame another request: the answers owed, with `unsent` bytes
    /// already written to the face's buffers, stay under --max-output-bytes, and the pipeline
    /// under --max-pipeline requests.
    [[nodiscard]] bool has_room(std::size_t unsent) const noexcept;
    /// @brief Sends the next batch of queued jobs to its world, if none is in flight and the
    /// output bound leaves room (`unsent`: bytes the face holds not yet written). `self` keeps
    /// the pipeline (and the face that holds it) alive until the batch is back.
    static void run_jobs(const std::shared_ptr<request_pipeline>& self, std::size_t unsent);

    /// @brief Whether the answer at the head of the queue is finished.
    [[nodiscard]] bool ready() const noexcept { return !slots_.empty() && slots_.front().pending == 0; }
    /// @brief Takes the finished answer at the head; call only when ready().
    [[nodiscard]] answer pop();

    /// @brief Answer bytes held in slots, not yet taken.
    [[nodiscard]] std::size_t held_bytes() const noexcept { return held_bytes_; }
    /// @brief True when jobs wait and none is on a world's strand: run_jobs() has work.
    [[nodiscard]] bool jobs_waiting() const noexcept { return !batch_in_flight_ && !jobs_.empty(); }
    /// @brief True while a batch of jobs is on a world's strand.
    [[nodiscard]] bool jobs_in_flight() const noexcept { return batch_in_flight_; }
    /// @brief Nothing owed: no answer waiting, no job queued or running.
    [[nodiscard]] bool idle() const noexcept { return slots_.empty() && jobs_.empty() && !batch_in_flight_; }
    /// @brief The connection is gone: world strands stop computing for it, no answer is kept.
    void close() noexcept;

  private:
    // A response position in request order. A batch fills one part per element.
    struct slot {
        std::string text;
        std::vector<std::string> parts;
        std::uint32_t pending = 0;
        bool batch = false;
        std::size_t bytes = 0;  // bytes held in text and parts (counted in held_bytes_)
        std::uint32_t watch_starts = 0;
    };
    struct pending_job {
        world_job job;
        std::uint64_t seq = 0;  // slot sequence number, meaningless when !has_slot
        std::size_t part = 0;
        bool has_slot = false;
        bool in_batch = false;  // answers one element of a JSON-RPC batch
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

    std::uint64_t push_slot(slot s);
    static void run_batch(std::shared_ptr<request_pipeline> self, std::unique_ptr<job_batch> batch);
    void on_jobs_done(std::unique_ptr<job_batch> batch);
    void complete(std::uint64_t seq, std::size_t part, std::optional<std::string> text);

    server_services& services_;
    dispatcher& dispatch_;
    session& session_;
    asio::any_io_executor home_;
    std::function<void()> resume_;
    protocol::parse_limits parse_limits_;

    std::deque<slot> slots_;
    std::uint64_t first_seq_ = 0;   // sequence number of slots_.front()
    std::size_t held_bytes_ = 0;    // answer bytes waiting in slots_
    std::deque<pending_job> jobs_;  // parsed world jobs not yet run, in request order
    std::vector<std::unique_ptr<job_batch>> spare_batches_;  // recycled job_batch objects
    bool batch_in_flight_ = false;
    std::atomic<bool> closed_{false};  // close() was called: world strands stop computing, home keeps nothing
};

}  // namespace ecsd::net
