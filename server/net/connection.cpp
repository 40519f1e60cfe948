#include "connection.hpp"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

#include "connection_manager.hpp"
#include "hosted_world.hpp"
#include "services.hpp"

namespace ecsd::net {
namespace {

constexpr std::size_t read_chunk = 64 * 1024;
constexpr auto linger_time = std::chrono::milliseconds(500);

bool blank(std::string_view line) noexcept {
    return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

std::string join_batch(std::vector<std::string>& parts) {
    std::string out;
    for (auto& p : parts) {
        if (p.empty()) continue;  // notifications answer nothing, not even inside a batch
        out += out.empty() ? '[' : ',';
        out += p;
    }
    if (!out.empty()) out += ']';
    return out;
}

std::string peer_of(const asio::ip::tcp::socket& s) {
    asio::error_code ec;
    const auto ep = s.remote_endpoint(ec);
    if (ec) return "?";
    return ep.address().to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

connection::connection(asio::ip::tcp::socket socket, server_services& services, dispatcher& dispatch,
                       connection_manager& manager, std::uint64_t id)
    : socket_(std::move(socket)),
      strand_(socket_.get_executor()),
      idle_timer_(strand_),
      services_(services),
      dispatch_(dispatch),
      manager_(manager),
      framer_(services.config.token.empty() ? services.config.max_line_bytes : services.config.preauth_line_bytes) {
    session_.id = id;
    session_.peer = peer_of(socket_);
    session_.authenticated = services.config.token.empty();
    parse_limits_.max_batch = services.config.max_batch;
}

void connection::start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
        self->services_.connections_open.fetch_add(1, std::memory_order_relaxed);
        spdlog::info("conn {}: opened from {}", self->session_.id, self->session_.peer);
        asio::error_code ignored;
        self->socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
        self->last_activity_ = std::chrono::steady_clock::now();
        self->arm_idle_timer();
        self->do_read();
    });
}

void connection::stop() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->close("stopped"); });
}

void connection::shutdown() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->begin_drain("server shutting down"); });
}

void connection::do_read() {
    if (reading_ || draining_ || stopped_) return;
    if (slots_.size() >= services_.config.max_pipeline) return;  // resumed by flush()
    reading_ = true;
    auto space = framer_.prepare(read_chunk);
    socket_.async_read_some(asio::buffer(space.data(), space.size()),
                            [self = shared_from_this()](const asio::error_code& ec, std::size_t n) {
                                self->on_read(ec, n);
                            });
}

void connection::on_read(const asio::error_code& ec, std::size_t n) {
    reading_ = false;
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
    framer_.commit(n);
    last_activity_ = std::chrono::steady_clock::now();
    process_lines();
    if (stopped_) return;
    submit_jobs();
    flush();
    if (!stopped_) do_read();
}

void connection::process_lines() {
    while (!draining_) {
        const auto fr = framer_.next();
        if (fr.status == protocol::frame_status::need_more) return;
        if (fr.status == protocol::frame_status::too_large) {
            const auto limit = framer_.max_line_bytes();
            spdlog::info("conn {}: line over {} bytes, closing", session_.id, limit);
            push_slot(slot{protocol::make_error(nullptr, protocol::reason::too_large,
                                                "line longer than " + std::to_string(limit) + " bytes",
                                                {{"limit", limit}}),
                           {}, 0, false});
            begin_drain("line too large");
            return;
        }
        if (!blank(fr.line)) handle_line(fr.line);
        // Checked per line, not per read: one read can hold thousands of requests with large answers.
        if (!move_ready()) return;
        // server.auth may just have succeeded: lift the small pre-auth cap.
        framer_.set_max_line_bytes(session_.authenticated ? services_.config.max_line_bytes
                                                          : services_.config.preauth_line_bytes);
    }
}

std::uint64_t connection::push_slot(slot s) {
    slots_.push_back(std::move(s));
    return first_seq_ + slots_.size() - 1;
}

void connection::handle_line(std::string_view line) {
    auto parsed = protocol::parse_line(line, parse_limits_);
    ++requests_;
    if (!parsed.batch) {
        auto& m = parsed.messages.front();
        if (auto* bad = std::get_if<protocol::bad_message>(&m)) {
            spdlog::info("conn {}: {}: {}", session_.id, protocol::name(bad->why), bad->detail);
            push_slot(slot{protocol::make_error(bad->id, bad->why, bad->detail, bad->data), {}, 0, false});
            return;
        }
        auto& req = std::get<protocol::request>(m);
        const bool notification = req.notification;
        auto p = dispatch_.prepare(std::move(req), session_);
        if (p.job) {
            std::uint64_t seq = 0;
            if (!notification) seq = push_slot(slot{{}, {}, 1, false});
            jobs_.push_back(pending_job{std::move(*p.job), seq, 0, !notification});
        } else if (p.response) {
            push_slot(slot{std::move(*p.response), {}, 0, false});
        }
        return;
    }
    slot s;
    s.batch = true;
    s.parts.resize(parsed.messages.size());
    const std::uint64_t seq = push_slot(std::move(s));
    std::uint32_t pending = 0;
    for (std::size_t i = 0; i < parsed.messages.size(); ++i) {
        auto& m = parsed.messages[i];
        auto& part = slots_.back().parts[i];
        if (auto* bad = std::get_if<protocol::bad_message>(&m)) {
            part = protocol::make_error(bad->id, bad->why, bad->detail, bad->data);
            continue;
        }
        auto p = dispatch_.prepare(std::move(std::get<protocol::request>(m)), session_);
        if (p.job) {
            ++pending;
            jobs_.push_back(pending_job{std::move(*p.job), seq, i, true});
        } else if (p.response) {
            part = std::move(*p.response);
        }
    }
    auto& mine = slots_.back();
    mine.pending = pending;
    if (pending == 0) mine.text = join_batch(mine.parts);
}

void connection::submit_jobs() {
    // Consecutive jobs for the same world travel together: one post to the world strand and one
    // post back, however deep the pipeline. Batches are recycled: a fresh kilobyte-sized vector
    // per post made glibc consolidate its fastbins on every read (6% of the CPU under load).
    std::size_t i = 0;
    while (i < jobs_.size()) {
        std::size_t j = i + 1;
        while (j < jobs_.size() && jobs_[j].job.world == jobs_[i].job.world) ++j;
        std::unique_ptr<job_batch> batch;
        if (spare_batches_.empty()) {
            batch = std::make_unique<job_batch>();
        } else {
            batch = std::move(spare_batches_.back());
            spare_batches_.pop_back();
        }
        batch->jobs.assign(std::make_move_iterator(jobs_.begin() + static_cast<std::ptrdiff_t>(i)),
                           std::make_move_iterator(jobs_.begin() + static_cast<std::ptrdiff_t>(j)));
        auto& world = *batch->jobs.front().job.world;
        jobs_in_flight_ += batch->jobs.size();
        asio::post(world.strand(), [self = shared_from_this(), batch = std::move(batch)]() mutable {
            batch->results.clear();
            for (auto& pj : batch->jobs) batch->results.push_back(self->dispatch_.run(pj.job));
            asio::post(self->strand_, [self, batch = std::move(batch)]() mutable { self->on_jobs_done(std::move(batch)); });
        });
        i = j;
    }
    jobs_.clear();
}

void connection::on_jobs_done(std::unique_ptr<job_batch> batch) {
    jobs_in_flight_ -= batch->jobs.size();
    for (std::size_t k = 0; k < batch->jobs.size(); ++k) {
        auto& pj = batch->jobs[k];
        if (pj.has_slot) complete(pj.seq, pj.part, dispatcher::finish(pj.job, batch->results[k]));
    }
    batch->jobs.clear();
    batch->results.clear();
    if (spare_batches_.size() < 4) spare_batches_.push_back(std::move(batch));
    flush();
    if (!stopped_) do_read();
}

void connection::complete(std::uint64_t seq, std::size_t part, std::optional<std::string> text) {
    if (stopped_ || seq < first_seq_) return;
    auto& s = slots_[seq - first_seq_];
    if (s.batch) {
        if (text) s.parts[part] = std::move(*text);
        if (--s.pending == 0) s.text = join_batch(s.parts);
    } else {
        if (text) s.text = std::move(*text);
        s.pending = 0;
    }
}

bool connection::move_ready() {
    if (stopped_) return false;
    while (!slots_.empty() && slots_.front().pending == 0) {
        auto& s = slots_.front();
        if (!s.text.empty()) {
            out_ += s.text;
            out_ += '\n';
        }
        slots_.pop_front();
        ++first_seq_;
    }
    if (out_.size() + writing_.size() > services_.config.max_output_bytes) {
        spdlog::warn("conn {}: {} bytes of responses unread, closing a slow reader", session_.id,
                     out_.size() + writing_.size());
        close("slow reader");
        return false;
    }
    return true;
}

void connection::flush() {
    if (!move_ready()) return;
    if (!write_in_flight_ && !out_.empty()) do_write();
    maybe_finish();
}

void connection::do_write() {
    writing_.clear();
    std::swap(out_, writing_);
    write_in_flight_ = true;
    asio::async_write(socket_, asio::buffer(writing_),
                      [self = shared_from_this()](const asio::error_code& ec, std::size_t) { self->on_write(ec); });
}

void connection::on_write(const asio::error_code& ec) {
    write_in_flight_ = false;
    if (stopped_) return;
    if (ec) {
        close(ec.message());
        return;
    }
    last_activity_ = std::chrono::steady_clock::now();
    if (!out_.empty()) {
        do_write();
    } else {
        maybe_finish();
    }
}

void connection::arm_idle_timer() {
    const double timeout = services_.config.idle_timeout;
    if (timeout <= 0) return;
    const auto span = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout));
    idle_timer_.expires_at(last_activity_ + span);
    idle_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) { self->on_idle(ec); });
}

void connection::on_idle(const asio::error_code& ec) {
    if (ec || stopped_) return;
    if (lingering_) {
        close(close_reason_);
        return;
    }
    const auto span = std::chrono::duration<double>(services_.config.idle_timeout);
    const bool busy = !slots_.empty() || jobs_in_flight_ > 0 || write_in_flight_;
    if (busy) last_activity_ = std::chrono::steady_clock::now();
    if (!busy && std::chrono::steady_clock::now() - last_activity_ >= span) {
        spdlog::info("conn {}: idle for {}s, closing", session_.id, services_.config.idle_timeout);
        close("idle timeout");
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
    if (draining_ && !stopped_ && !lingering_ && slots_.empty() && jobs_in_flight_ == 0 && !write_in_flight_ &&
        out_.empty()) {
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
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    idle_timer_.cancel();
    services_.connections_open.fetch_sub(1, std::memory_order_relaxed);
    spdlog::info("conn {}: closed ({}), {} lines", session_.id, why, requests_);
    manager_.remove(shared_from_this());
}

}  // namespace ecsd::net
