#include "transport/connection.hpp"

#include <algorithm>
#include <cctype>
#include <span>
#include <utility>

#include <spdlog/spdlog.h>

#include "hosting/hosted_world.hpp"
#include "hosting/watch.hpp"
#include "rpc/services.hpp"
#include "socket_options.hpp"
#include "transport/connection_manager.hpp"

namespace ecsd::net {
namespace {

constexpr std::size_t read_chunk = std::size_t{64} * 1024;
constexpr auto linger_time = std::chrono::milliseconds(500);
/// A written output buffer is kept for reuse when it is no larger than this.
constexpr std::size_t keep_buffer_bytes = std::size_t{256} * 1024;
/// Answers shorter than this are copied into a shared output buffer (few buffers per write for
/// pipelined small requests); longer ones are moved in as they are, never copied (a query page of
/// 100 entities is 13 KB: 16 of them pipelined are 16 of a write's 64 buffers).
constexpr std::size_t copy_below_bytes = std::size_t{4} * 1024;
/// A shared output buffer takes more small answers while it is shorter than this.
constexpr std::size_t coalesce_bytes = std::size_t{64} * 1024;

std::chrono::steady_clock::duration to_duration(double seconds) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(seconds));
}

std::int64_t steady_ns(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::string format_seconds(double s) {
    std::string text = std::to_string(s);
    while (text.size() > 1 && text.back() == '0') text.pop_back();
    if (!text.empty() && text.back() == '.') text.pop_back();
    return text;
}

/// Whether a line is HTTP's rather than JSON-RPC's: a request line (`POST / HTTP/1.1`, a method
/// word, a space and a path, `*` or an absolute URL) or a Host header. A browser can be made to
/// send such lines here (a form or fetch aimed at this port), with a JSON-RPC line as the body:
/// as Redis does, the connection is closed before anything runs.
bool looks_like_http(std::string_view line) noexcept {
    if (line.empty() || line.front() == '{' || line.front() == '[') return false;
    constexpr std::string_view host = "host:";
    if (line.size() >= host.size() && std::equal(host.begin(), host.end(), line.begin(), [](char a, char b) {
            return a == std::tolower(static_cast<unsigned char>(b));
        }))
        return true;
    constexpr std::array<std::string_view, 9> methods{"GET",     "HEAD",  "POST",    "PUT",  "DELETE",
                                                      "OPTIONS", "PATCH", "CONNECT", "TRACE"};
    for (const auto m : methods) {
        if (!line.starts_with(m) || line.size() < m.size() + 2 || line[m.size()] != ' ') continue;
        const auto target = line.substr(m.size() + 1);
        if (m == "CONNECT" || target.starts_with('/') || target.starts_with('*') ||
            target.starts_with("http://") || target.starts_with("https://"))
            return true;
    }
    return false;
}

bool blank(std::string_view line) noexcept {
    return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

std::string peer_of(const asio::ip::tcp::socket& s) {
    asio::error_code ec;
    const auto ep = s.remote_endpoint(ec);
    if (ec) return "?";
    return ep.address().to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

connection::connection(asio::ip::tcp::socket socket, server_services& services, dispatcher& dispatch,
                       connection_manager& manager, std::uint64_t id,
                       std::optional<websocket_handover> websocket)
    : socket_(std::move(socket)),
      strand_(socket_.get_executor()),
      idle_timer_(strand_),
      services_(services),
      dispatch_(dispatch),
      manager_(manager),
      framer_(services.config.auth_required() ? services.config.preauth_line_bytes
                                              : services.config.max_line_bytes),
      pipeline_(services, dispatch, session_, strand_, [this] { pump(); }) {
    session_.id = id;
    session_.peer = peer_of(socket_);
    session_.authenticated = !services.config.auth_required();
    if (websocket) {
        // What the upgrade's Authorization header proved carries over; the rest is this connection's.
        const auto& from = websocket->from;
        session_.authenticated = from.authenticated;
        session_.auth_failures = from.auth_failures;
        session_.who = from.who;
        session_.identity = from.identity;
        session_.token_hash = from.token_hash;
        session_.identity_generation = from.identity_generation;
        session_.face = "websocket";
        ws_.emplace(session_.authenticated ? services.config.max_line_bytes
                                           : services.config.preauth_line_bytes);
        ws_->feed(websocket->early_input);
        preface_ = std::move(websocket->response);
    }
}

void connection::start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
        self->services_.connections_open.fetch_add(1, std::memory_order_relaxed);
        tune_socket(self->socket_);
        self->last_activity_ = self->opened_ = std::chrono::steady_clock::now();
        self->session_.watches = watch_sink::for_connection(
            self->services_.config, self->services_.watch_views, [weak = self->weak_from_this()] {
                // defer: called on a network thread (a world's publish, a request), it queues
                // the pump behind that thread's handler instead of waking another thread for it.
                if (auto c = weak.lock()) asio::defer(c->strand_, [c] { c->pump(); });
            });
        self->output_account_ = self->services_.output.open([weak = self->weak_from_this()] {
            if (auto c = weak.lock()) {
                asio::post(c->strand_, [c] {
                    if (c->stopped_) return;
                    spdlog::warn(
                        "conn {}: closed to keep --max-output-total: {} bytes unsent, the slowest reader",
                        c->session_.id, c->buffered_bytes());
                    c->close("slow reader (--max-output-total)");
                });
            }
        });
        self->stalled_since_.store(steady_ns(self->opened_), std::memory_order_relaxed);
        self->services_.clients.update(self->session_);
        self->arm_idle_timer();
        if (!self->preface_.empty()) {
            self->append_out(self->preface_);
            self->preface_ = std::string();
        }
        self->pump();  // a WebSocket's 101 answer, and frames its client sent right after the upgrade
    });
}

void connection::stop() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->close("stopped"); });
}

void connection::shutdown() {
    asio::dispatch(strand_, [self = shared_from_this()] {
        self->ws_close_code_ = 1001;  // going away
        self->begin_drain("server shutting down");
    });
}

void connection::evict() {
    stalled_since_.store(0, std::memory_order_relaxed);  // never picked twice
    asio::dispatch(strand_, [self = shared_from_this()] {
        if (self->stopped_ || self->draining_) return;
        spdlog::warn("conn {}: stalled mid-request at the connection limit, closing it to make room",
                     self->session_.id);
        self->pipeline_.answer_now(
            protocol::make_error(nullptr, protocol::reason::timeout,
                                 "closed to make room for another client: request not finished", {}));
        self->begin_drain("evicted at the connection limit");
    });
}

std::size_t connection::buffered_bytes() const noexcept {
    return pipeline_.held_bytes() + out_bytes_;
}

bool connection::has_room() const noexcept {
    return pipeline_.has_room(out_bytes_);
}

void connection::do_read() {
    if (reading_ || draining_ || stopped_) return;
    if (!has_room()) return;  // resumed by pump() once the client has read or jobs are done
    reading_ = true;
    auto space = ws_ ? ws_->prepare(read_chunk) : framer_.prepare(read_chunk);
    socket_.async_read_some(
        asio::buffer(space.data(), space.size()),
        [self = shared_from_this()](const asio::error_code& ec, std::size_t n) { self->on_read(ec, n); });
}

void connection::on_read(const asio::error_code& ec, std::size_t n) {
    reading_ = false;
    services_.bytes_in.fetch_add(n, std::memory_order_relaxed);
    if (stopped_) return;
    if (lingering_) {
        if (ec) {
            close(close_reason_);
        } else {
            discard_input();
        }
        return;
    }
    if (ec) {
        if (ec == asio::error::eof || ec == asio::error::operation_aborted) {
            begin_drain("client closed its side");
            maybe_finish();
        } else {
            close(ec.message());
        }
        return;
    }
    if (ws_) {
        ws_->commit(n);
    } else {
        framer_.commit(n);
    }
    last_activity_ = std::chrono::steady_clock::now();
    pump();
}

void connection::pump() {
    if (stopped_) return;
    process_lines();
    if (stopped_) return;
    submit_jobs();
    flush();
    if (!stopped_) do_read();
}

void connection::take_notifications() {
    if (!session_.watches || lingering_ || stopped_) return;
    // Past the sink's window they are taken when the client has read (on_write pumps); till then
    // they wait in the sink, merged into one if the client stays behind. Answers held in their
    // slots count too, but they wait for these notifications: with nothing unsent, at least one
    // notification is taken, or the two would wait for each other.
    const std::size_t room = session_.watches->room(buffered_bytes());
    if (room == 0 && out_bytes_ > 0) return;
    watch_bytes taken;
    session_.watches->take(taken, std::max<std::size_t>(room, 1));
    if (ws_) {
        frame_notifications(taken);
        return;
    }
    for (auto& piece : taken.pieces()) {
        if (piece.shared) {
            out_bytes_ += piece.shared->size();
            out_.push_back({{}, std::move(piece.shared)});
        } else {
            push_out(std::move(piece.text));
        }
    }
}

std::string& connection::out_tail() {
    if (out_.size() <= in_flight_ || out_.back().shared || out_.back().text.size() >= coalesce_bytes) {
        out_.push_back({std::move(spare_), nullptr});
        spare_ = std::string();
        out_.back().text.clear();
    }
    return out_.back().text;
}

void connection::append_out(std::string_view bytes) {
    if (bytes.empty()) return;
    out_tail().append(bytes);
    out_bytes_ += bytes.size();
}

void connection::push_out(std::string&& text) {
    if (text.size() < copy_below_bytes) {
        append_out(text);
        return;
    }
    out_bytes_ += text.size();
    out_.push_back({std::move(text), nullptr});
}

void connection::frame_notifications(watch_bytes& taken) {
    // Notifications arrive as lines, in pieces: text of our own and bodies shared with every
    // connection that sends them (a diff's body). Each line becomes one text message: its header
    // (the line's length is known once its newline is found), then its pieces as they are.
    struct segment {
        std::string_view text;
        std::shared_ptr<const std::string> shared;
    };
    std::vector<segment> line;
    std::size_t bytes = 0;
    const auto emit = [&] {
        append_out(protocol::ws_frame_header(protocol::ws_opcode::text, bytes));
        for (auto& seg : line) {
            if (seg.shared) {
                out_bytes_ += seg.shared->size();
                out_.push_back({{}, std::move(seg.shared)});
            } else {
                append_out(seg.text);
            }
        }
        line.clear();
        bytes = 0;
    };
    for (auto& piece : taken.pieces()) {
        if (piece.shared) {
            bytes += piece.shared->size();
            line.push_back({{}, std::move(piece.shared)});
            continue;
        }
        std::string_view rest = piece.text;
        while (!rest.empty()) {
            const auto end = rest.find('\n');
            const auto part = rest.substr(0, end);
            if (!part.empty()) {
                line.push_back({part, nullptr});
                bytes += part.size();
            }
            if (end == std::string_view::npos) break;
            emit();
            rest.remove_prefix(end + 1);
        }
    }
    if (!line.empty()) emit();
}

void connection::process_messages() {
    bool completed = false;
    while (!draining_ && !stopped_) {
        if (!has_room()) return;
        const auto fr = ws_->next();
        switch (fr.status) {
            case protocol::ws_status::need_more:
                note_input_state(completed);
                return;
            case protocol::ws_status::text:
                completed = true;
                any_line_ = true;
                if (!blank(fr.payload)) {
                    ++requests_;
                    pipeline_.submit(fr.payload);
                }
                break;
            case protocol::ws_status::ping:
                completed = true;
                append_out(protocol::ws_frame_header(protocol::ws_opcode::pong, fr.payload.size()));
                append_out(fr.payload);
                break;
            case protocol::ws_status::pong:
                completed = true;
                break;
            case protocol::ws_status::closed:
                begin_drain("the client closed the WebSocket");  // answered with a close frame
                return;
            case protocol::ws_status::too_large: {
                const auto limit = ws_->max_message_bytes();
                spdlog::info("conn {}: WebSocket message over {} bytes, closing", session_.id, limit);
                pipeline_.answer_now(protocol::make_error(
                    nullptr, protocol::reason::too_large,
                    "message longer than " + std::to_string(limit) + " bytes", {{"limit", limit}}));
                ws_close_code_ = 1009;
                begin_drain("message too large");
                return;
            }
            case protocol::ws_status::protocol_error:
                spdlog::info("conn {}: WebSocket protocol error from {}: {}", session_.id, session_.peer,
                             fr.why);
                ws_close_code_ = fr.code;
                ws_close_reason_ = fr.why;
                begin_drain("WebSocket protocol error");
                return;
        }
        if (session_.close_requested) {  // e.g. too many wrong tokens: answer, then close
            spdlog::info("conn {}: closing after {} wrong tokens", session_.id, session_.auth_failures);
            ws_close_code_ = 1008;
            begin_drain("too many wrong tokens");
            return;
        }
        ws_->set_max_message_bytes(session_.authenticated ? services_.config.max_line_bytes
                                                          : services_.config.preauth_line_bytes);
    }
}

void connection::process_lines() {
    if (ws_) {
        process_messages();
        return;
    }
    bool completed = false;
    while (!draining_ && !stopped_) {
        // Lines stay in the framer while the answers already owed fill the output bound.
        if (!has_room()) return;
        const auto fr = framer_.next();
        if (fr.status == protocol::frame_status::need_more) {
            note_input_state(completed);
            return;
        }
        if (fr.status == protocol::frame_status::too_large) {
            const auto limit = framer_.max_line_bytes();
            spdlog::info("conn {}: line over {} bytes, closing", session_.id, limit);
            pipeline_.answer_now(protocol::make_error(nullptr, protocol::reason::too_large,
                                                      "line longer than " + std::to_string(limit) + " bytes",
                                                      {{"limit", limit}}));
            begin_drain("line too large");
            return;
        }
        if (looks_like_http(fr.line)) {
            spdlog::warn(
                "conn {}: HTTP sent to the JSON-RPC port from {} (a browser made to post here?); "
                "closing without running anything",
                session_.id, session_.peer);
            begin_drain("HTTP on the JSON-RPC port");
            return;
        }
        completed = true;
        any_line_ = true;
        if (!blank(fr.line)) {
            ++requests_;
            pipeline_.submit(fr.line);
        }
        if (session_.close_requested) {  // e.g. too many wrong tokens: answer, then close
            spdlog::info("conn {}: closing after {} wrong tokens", session_.id, session_.auth_failures);
            begin_drain("too many wrong tokens");
            return;
        }
        // server.auth may just have succeeded: lift the small pre-auth cap.
        framer_.set_max_line_bytes(session_.authenticated ? services_.config.max_line_bytes
                                                          : services_.config.preauth_line_bytes);
    }
}

void connection::note_input_state(bool completed_a_line) {
    // The request deadline runs from the first byte of an unfinished line; a connection that has
    // sent nothing at all yet counts as stalled (for eviction) from the moment it opened.
    const auto now = std::chrono::steady_clock::now();
    if ((ws_ ? ws_->buffered() : framer_.buffered()) > 0) {
        const bool began = !partial_ || completed_a_line;
        if (began) partial_since_ = now;
        partial_ = true;
        stalled_since_.store(steady_ns(partial_since_), std::memory_order_relaxed);
        const double rt = services_.config.request_timeout;
        if (began && rt > 0 && timer_deadline_ > partial_since_ + to_duration(rt)) arm_idle_timer();
    } else {
        partial_ = false;
        stalled_since_.store(any_line_ ? 0 : steady_ns(opened_), std::memory_order_relaxed);
    }
}

void connection::submit_jobs() {
    if (stopped_ || !pipeline_.jobs_waiting()) return;
    move_ready();
    request_pipeline::run_jobs(std::shared_ptr<request_pipeline>(shared_from_this(), &pipeline_), out_bytes_);
}

void connection::move_ready() {
    // Notifications published before an answer was computed go out before that answer; those of
    // a new subscription go out right after its world.watch answer.
    // While some are still owed (the output bound is reached, or a resync is on its way), the
    // answers wait: on_write pumps again once the client has read.
    take_notifications();
    bool owed = session_.watches && session_.watches->owes();
    while (pipeline_.ready() && !owed) {
        auto a = pipeline_.pop();
        if (a.batch) {
            // One line, '[' a ',' b ... ']', its elements moved (not joined) into the output.
            if (ws_) {  // one message: its header says how long the whole batch answer is
                std::size_t bytes = 1;
                for (const auto& p : a.parts)
                    if (!p.empty()) bytes += p.size() + 1;
                if (bytes > 1) append_out(protocol::ws_frame_header(protocol::ws_opcode::text, bytes));
            }
            bool first = true;
            for (auto& p : a.parts) {
                if (p.empty()) continue;  // notifications answer nothing, not even inside a batch
                append_out(first ? "[" : ",");
                first = false;
                push_out(std::move(p));
            }
            if (!first) append_out(ws_ ? "]" : "]\n");
        } else if (!a.text.empty()) {
            if (ws_) append_out(protocol::ws_frame_header(protocol::ws_opcode::text, a.text.size()));
            push_out(std::move(a.text));
            if (!ws_) append_out("\n");
        }
        for (std::uint32_t k = 0; k < a.watch_starts; ++k) session_.watches->start_next();
        if (a.watch_starts > 0) {
            take_notifications();
            owed = session_.watches->owes();
        }
    }
}

void connection::flush() {
    if (stopped_) return;
    move_ready();
    if (!write_in_flight_ && out_bytes_ > 0) do_write();
    note_output(false);
    maybe_finish();
}

void connection::note_output(bool moved) {
    if (output_account_ && !stopped_)
        services_.note_output(*output_account_, buffered_bytes(), session_.watches.get(), moved);
}

void connection::do_write() {
    // One gathered write of the buffers at the head of out_ (asio sends at most 64 at a time).
    std::size_t n = 0;
    for (auto it = out_.begin(); it != out_.end() && n < iov_.size(); ++it, ++n) {
        const std::size_t skip = n == 0 ? out_front_pos_ : 0;
        iov_[n] = asio::const_buffer(it->data() + skip, it->size() - skip);
    }
    in_flight_ = n;
    write_in_flight_ = true;
    write_some();
}

void connection::write_some() {
    socket_.async_write_some(
        std::span<const asio::const_buffer>(iov_.data(), in_flight_),
        [self = shared_from_this()](const asio::error_code& ec, std::size_t n) { self->on_write(ec, n); });
}

void connection::on_write(const asio::error_code& ec, std::size_t n) {
    if (!services_.write_completed(stopped_, write_in_flight_, ec, n,
                                   [this](const std::string& why) { close(why); }))
        return;
    last_activity_ = std::chrono::steady_clock::now();  // a client that reads is not idle
    out_bytes_ -= n;
    // Written buffers are freed now: a burst of large answers does not outlive its write.
    while (n > 0) {
        auto& front = out_.front();
        const std::size_t left = front.size() - out_front_pos_;
        if (n < left) {
            out_front_pos_ += n;
            break;
        }
        n -= left;
        out_front_pos_ = 0;
        if (!front.shared && front.text.capacity() <= keep_buffer_bytes &&
            front.text.capacity() > spare_.capacity()) {
            front.text.clear();
            spare_ = std::move(front.text);
        }
        out_.pop_front();
    }
    write_in_flight_ = false;
    in_flight_ = 0;
    note_output(true);
    pump();  // room may have opened for lines, jobs and reads held back by the output bound
}

void connection::arm_idle_timer() {
    using clock = std::chrono::steady_clock;
    auto deadline = clock::time_point::max();
    if (services_.config.idle_timeout > 0)
        deadline = last_activity_ + to_duration(services_.config.idle_timeout);
    if (services_.config.request_timeout > 0 && partial_)
        deadline = std::min(deadline, partial_since_ + to_duration(services_.config.request_timeout));
    timer_deadline_ = deadline;
    if (deadline == clock::time_point::max()) return;
    idle_timer_.expires_at(deadline);
    idle_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) { self->on_idle(ec); });
}

void connection::on_idle(const asio::error_code& ec) {
    if (ec || stopped_) return;
    timer_deadline_ = std::chrono::steady_clock::time_point::max();
    if (lingering_) {
        close(close_reason_);
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    const double rt = services_.config.request_timeout;
    if (rt > 0 && partial_ && !draining_ && now - partial_since_ >= to_duration(rt)) {
        spdlog::info("conn {}: request line unfinished after {}s, closing", session_.id, rt);
        partial_ = false;
        pipeline_.answer_now(protocol::make_error(
            nullptr, protocol::reason::timeout,
            "request line not finished within " + format_seconds(rt) + " s", {{"limit_s", rt}}));
        begin_drain("request timeout");
        if (!stopped_ && !lingering_) arm_idle_timer();
        return;
    }
    // Waiting on a world is not idleness; waiting on a client that does not read is.
    if (pipeline_.jobs_in_flight()) last_activity_ = now;
    const double idle = services_.config.idle_timeout;
    if (idle > 0 && now - last_activity_ >= to_duration(idle)) {
        const bool stalled_write = write_in_flight_;
        spdlog::info("conn {}: {} for {}s, closing", session_.id,
                     stalled_write ? "no write progress" : "idle", idle);
        close(stalled_write ? "slow reader" : "idle timeout");
        return;
    }
    arm_idle_timer();
}

void connection::begin_drain(std::string_view why) {
    if (stopped_ || draining_) return;
    draining_ = true;
    close_reason_ = why;
    if (reading_) {
        // Wakes the pending read (it completes with eof) without touching the write side.
        asio::error_code ignored;
        socket_.shutdown(asio::ip::tcp::socket::shutdown_receive, ignored);
    }
    flush();
}

void connection::maybe_finish() {
    if (draining_ && !stopped_ && !lingering_ && pipeline_.idle() && !write_in_flight_ && out_bytes_ == 0) {
        if (ws_ && !ws_close_sent_) {
            // Everything owed is written: the close frame goes last, then the TCP side closes.
            ws_close_sent_ = true;
            append_out(protocol::ws_close_frame(ws_close_code_, ws_close_reason_));
            do_write();
            return;
        }
        linger();
    }
}

void connection::linger() {
    // Closing with unread input makes the kernel send RST, which can destroy the responses we
    // just wrote before the client reads them (e.g. the too_large error). So: send FIN, discard
    // input until the client closes too, and give up after a short grace period.
    lingering_ = true;
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    idle_timer_.expires_after(linger_time);
    idle_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) { self->on_idle(ec); });
    discard_input();
}

void connection::discard_input() {
    if (reading_) return;  // the pending read (after shutdown_receive) ends with eof and comes back here
    reading_ = true;
    auto space = framer_.prepare(read_chunk);
    socket_.async_read_some(asio::buffer(space.data(), space.size()),
                            [self = shared_from_this()](const asio::error_code& ec, std::size_t) {
                                self->reading_ = false;
                                if (self->stopped_) return;
                                if (ec) {
                                    self->close(self->close_reason_);
                                } else {
                                    self->discard_input();
                                }
                            });
}

void connection::close(std::string_view why) {
    if (stopped_) return;
    stopped_ = true;
    pipeline_.close();  // world strands stop computing for us
    if (session_.watches) session_.watches->close();
    if (output_account_) services_.output.close(output_account_);
    services_.clients.remove(session_);
    stalled_since_.store(0, std::memory_order_relaxed);
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    idle_timer_.cancel();
    services_.connections_open.fetch_sub(1, std::memory_order_relaxed);
    // One line per connection, at debug (an info line for each would drown a busy server's log):
    // everything worth knowing about it is known now.
    spdlog::debug("conn {}: from {}, closed after {:.1f}s ({}), {} lines", session_.id, session_.peer,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count(), why,
                  requests_);
    manager_.remove(shared_from_this());
}

}  // namespace ecsd::net
