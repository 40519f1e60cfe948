#include "transport/connection.hpp"

#include <algorithm>
#include <cctype>
#include <span>
#include <utility>

#include <spdlog/spdlog.h>

#include "hosting/hosted_world.hpp"
#include "hosting/watch.hpp"
#include "rpc/services.hpp"
#include "transport/connection_manager.hpp"

namespace ecsd::net {
namespace {

constexpr std::size_t read_chunk = std::size_t{64} * 1024;
constexpr auto linger_time = std::chrono::milliseconds(500);
/// A written output buffer is kept for reuse when it is no larger than this.
constexpr std::size_t keep_buffer_bytes = std::size_t{256} * 1024;
/// Answers shorter than this are copied into a shared output buffer (few buffers per write for
/// pipelined small requests); longer ones are moved in as they are, never copied.
constexpr std::size_t copy_below_bytes = std::size_t{16} * 1024;
/// A shared output buffer takes more small answers while it is shorter than this.
constexpr std::size_t coalesce_bytes = std::size_t{64} * 1024;
/// How long a world strand works for one connection before it lets ticks and others in.
constexpr double slice_seconds = job_runner::slice_seconds;

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

/// Bytes a result will take as JSON text, without writing it (counted against the output bound).
std::size_t approx_size(const nlohmann::json& j) {
    switch (j.type()) {
        case nlohmann::json::value_t::object: {
            std::size_t n = 2;
            for (const auto& [key, value] : j.items()) n += key.size() + 4 + approx_size(value);
            return n;
        }
        case nlohmann::json::value_t::array: {
            std::size_t n = 2;
            for (const auto& value : j) n += 1 + approx_size(value);
            return n;
        }
        case nlohmann::json::value_t::string:
            return j.get_ref<const std::string&>().size() + 2;
        default:
            return 8;
    }
}

/// The response to a finished job. A large result that is already text (a page of entities can be
/// a megabyte) becomes the response in place, wrapped in the envelope dispatcher::finish makes
/// around a stand-in result, instead of being copied: a batch of pages is never held twice.
std::optional<std::string> respond(const world_job& job, job_result& r) {
    if (!r.is_error && r.text.size() >= copy_below_bytes) {
        constexpr std::string_view stand_in = "[0]";
        const auto shell = dispatcher::finish(job, job_result{{}, false, std::string(stand_in)});
        if (!shell) return std::nullopt;  // a notification
        if (shell->size() > stand_in.size() + 1 && shell->ends_with("[0]}")) {
            std::string out = std::move(r.text);
            out.insert(0, *shell, 0, shell->size() - stand_in.size() - 1);
            out += '}';
            return out;
        }
    }
    return dispatcher::finish(job, r);
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
                       connection_manager& manager, std::uint64_t id)
    : socket_(std::move(socket)),
      strand_(socket_.get_executor()),
      idle_timer_(strand_),
      services_(services),
      dispatch_(dispatch),
      manager_(manager),
      framer_(services.config.token.empty() ? services.config.max_line_bytes
                                            : services.config.preauth_line_bytes) {
    session_.id = id;
    session_.peer = peer_of(socket_);
    session_.authenticated = services.config.token.empty();
    parse_limits_.max_batch = services.config.max_batch;
}

void connection::start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
        self->services_.connections_open.fetch_add(1, std::memory_order_relaxed);
        asio::error_code ignored;
        self->socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
        self->last_activity_ = self->opened_ = std::chrono::steady_clock::now();
        self->session_.watches = watch_sink::for_connection(
            self->services_.config, self->services_.watch_views, [weak = self->weak_from_this()] {
                if (auto c = weak.lock()) asio::post(c->strand_, [c] { c->pump(); });
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

void connection::evict() {
    stalled_since_.store(0, std::memory_order_relaxed);  // never picked twice
    asio::dispatch(strand_, [self = shared_from_this()] {
        if (self->stopped_ || self->draining_) return;
        spdlog::warn("conn {}: stalled mid-request at the connection limit, closing it to make room",
                     self->session_.id);
        self->push_slot(
            slot{protocol::make_error(nullptr, protocol::reason::timeout,
                                      "closed to make room for another client: request not finished", {}),
                 {},
                 0,
                 false,
                 0});
        self->begin_drain("evicted at the connection limit");
    });
}

std::size_t connection::buffered_bytes() const noexcept {
    return held_bytes_ + out_bytes_;
}

bool connection::has_room() const noexcept {
    const auto& cfg = services_.config;
    return buffered_bytes() < cfg.max_output_bytes && slots_.size() < cfg.max_pipeline &&
           jobs_.size() < cfg.max_pipeline;
}

void connection::do_read() {
    if (reading_ || draining_ || stopped_) return;
    if (!has_room()) return;  // resumed by pump() once the client has read or jobs are done
    reading_ = true;
    auto space = framer_.prepare(read_chunk);
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
    framer_.commit(n);
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
    const std::size_t limit = services_.config.max_output_bytes;
    const std::size_t held = buffered_bytes();
    // Past the bound they are taken when the client has read (on_write pumps). Answers held in
    // their slots count too, but they wait for these notifications: with nothing unsent, at
    // least one notification is taken, or the two would wait for each other.
    if (held >= limit && out_bytes_ > 0) return;
    watch_bytes taken;
    session_.watches->take(taken, held < limit ? limit - held : 1);
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

void connection::process_lines() {
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
            push_slot(slot{protocol::make_error(nullptr, protocol::reason::too_large,
                                                "line longer than " + std::to_string(limit) + " bytes",
                                                {{"limit", limit}}),
                           {},
                           0,
                           false,
                           0});
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
        if (!blank(fr.line)) handle_line(fr.line);
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
    if (framer_.buffered() > 0) {
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

std::uint64_t connection::push_slot(slot s) {
    s.bytes = s.text.size();
    for (const auto& p : s.parts) s.bytes += p.size();
    held_bytes_ += s.bytes;
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
            push_slot(slot{protocol::make_error(bad->id, bad->why, bad->detail, bad->data), {}, 0, false, 0});
            return;
        }
        auto& req = std::get<protocol::request>(m);
        const bool notification = req.notification;
        auto p = dispatch_.prepare(std::move(req), session_);
        if (p.job) {
            std::uint64_t seq = 0;
            if (!notification) seq = push_slot(slot{{}, {}, 1, false, 0});
            jobs_.push_back(pending_job{std::move(*p.job), seq, 0, !notification, false});
        } else if (p.response) {
            push_slot(slot{std::move(*p.response), {}, 0, false, 0});
        }
        return;
    }
    slot s;
    s.batch = true;
    s.parts.resize(parsed.messages.size());
    const std::uint64_t seq = push_slot(std::move(s));
    const std::size_t limit = services_.config.max_output_bytes;
    std::uint32_t pending = 0;
    for (std::size_t i = 0; i < parsed.messages.size(); ++i) {
        auto& m = parsed.messages[i];
        auto& mine = slots_.back();
        auto& part = mine.parts[i];
        if (auto* bad = std::get_if<protocol::bad_message>(&m)) {
            part = protocol::make_error(bad->id, bad->why, bad->detail, bad->data);
        } else if (mine.bytes >= limit) {
            // The batch answer leaves as one line: past the bound its elements are not run.
            auto& req = std::get<protocol::request>(m);
            if (!req.notification)
                part = protocol::make_error(req.id, protocol::reason::too_large, batch_too_large(limit),
                                            {{"limit", limit}});
        } else {
            auto p = dispatch_.prepare(std::move(std::get<protocol::request>(m)), session_);
            if (p.job) {
                ++pending;
                jobs_.push_back(pending_job{std::move(*p.job), seq, i, true, true});
            } else if (p.response) {
                part = std::move(*p.response);
            }
        }
        mine.bytes += part.size();
        held_bytes_ += part.size();
    }
    slots_.back().pending = pending;
}

void connection::submit_jobs() {
    // One batch of jobs in flight at a time: consecutive jobs for the same world travel together
    // (one post there and one back, however deep the pipeline), and the batch may produce only
    // as many answer bytes as the output bound has room for. Batches are recycled: a fresh
    // kilobyte-sized vector per post made glibc consolidate its fastbins on every read.
    if (batch_in_flight_ || jobs_.empty() || stopped_) return;
    move_ready();
    const std::size_t limit = services_.config.max_output_bytes;
    const std::size_t unsent = out_bytes_;
    const std::size_t held = buffered_bytes();
    const auto& first = jobs_.front();
    // The first job may always run when nothing it would wait behind is unsent past the bound:
    // its answer is what lets the slots behind it go out.
    const bool head_may_run = (!first.has_slot || first.seq == first_seq_) && unsent < limit;
    const std::size_t budget = held < limit ? limit - held : 0;
    if (budget == 0 && !head_may_run) return;  // resumed by on_write once the client reads

    std::unique_ptr<job_batch> batch;
    if (spare_batches_.empty()) {
        batch = std::make_unique<job_batch>();
    } else {
        batch = std::move(spare_batches_.back());
        spare_batches_.pop_back();
    }
    batch->budget = budget;
    batch->head_may_run = head_may_run;
    const auto* world = first.job.world.get();
    while (!jobs_.empty() && jobs_.front().job.world.get() == world) {
        auto& pj = jobs_.front();
        if (pj.in_batch && std::none_of(batch->batch_bytes.begin(), batch->batch_bytes.end(),
                                        [&](const auto& e) { return e.first == pj.seq; })) {
            batch->batch_bytes.emplace_back(pj.seq, slots_[pj.seq - first_seq_].bytes);
        }
        batch->jobs.push_back(std::move(pj));
        jobs_.pop_front();
    }
    batch_in_flight_ = true;
    auto& strand = batch->jobs.front().job.world->strand();
    asio::post(strand, [self = shared_from_this(), batch = std::move(batch)]() mutable {
        run_batch(std::move(self), std::move(batch));
    });
}

void connection::run_batch(std::shared_ptr<connection> self, std::unique_ptr<job_batch> batch) {
    // On the world's strand. Runs jobs in order until the batch is done, its output budget is
    // spent (the rest goes back to the connection), the connection is gone (the rest is
    // dropped), or its time slice is used up (the rest is posted again, behind due ticks).
    const auto started = std::chrono::steady_clock::now();
    const std::size_t limit = self->services_.config.max_output_bytes;
    auto& strand = batch->jobs.front().job.world->strand();
    const auto publish = [&] {
        // A paused world has no tick to publish what these requests changed: its watchers hear now.
        if (batch->mutated) batch->jobs.front().job.world->publish_if_paused();
        batch->mutated = false;
    };
    const auto repost = [&] {
        publish();
        asio::post(strand, [self, batch = std::move(batch)]() mutable {
            run_batch(std::move(self), std::move(batch));
        });
    };
    while (batch->results.size() < batch->jobs.size()) {
        if (self->closed_.load(std::memory_order_relaxed)) break;
        const std::size_t k = batch->results.size();
        auto& pj = batch->jobs[k];
        std::size_t* batch_bytes = nullptr;
        if (pj.in_batch) {
            for (auto& e : batch->batch_bytes) {
                if (e.first == pj.seq) batch_bytes = &e.second;
            }
            if (batch_bytes != nullptr && *batch_bytes >= limit) {
                batch->results.push_back(
                    job_result{nullptr, true,
                               protocol::error_text(protocol::reason::too_large, batch_too_large(limit),
                                                    {{"limit", limit}})});
                continue;
            }
        }
        const bool may_run = !pj.has_slot || batch->spent < batch->budget || (k == 0 && batch->head_may_run);
        if (!may_run) break;  // the rest waits until the client has read what it is owed

        auto done = batch->runner.next(self->dispatch_, pj.job);
        if (!done) {
            repost();  // a long step: the rest of it after due ticks and other requests
            return;
        }
        job_result r = std::move(*done);
        batch->runner = {};
        if (!r.is_error && has(pj.job.method->flags, method_flags::mutating)) batch->mutated = true;
        const std::size_t size = r.text.empty() ? approx_size(r.value) : r.text.size();
        batch->spent += size;
        if (batch_bytes) *batch_bytes += size;
        batch->results.push_back(std::move(r));
        if (batch->results.size() < batch->jobs.size() &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >=
                slice_seconds) {
            repost();
            return;
        }
    }
    publish();
    auto& home = self->strand_;
    asio::post(home, [self = std::move(self), batch = std::move(batch)]() mutable {
        self->on_jobs_done(std::move(batch));
    });
}

void connection::on_jobs_done(std::unique_ptr<job_batch> batch) {
    batch_in_flight_ = false;
    if (stopped_) return;
    const std::size_t done = batch->results.size();
    for (std::size_t k = 0; k < done; ++k) {
        auto& pj = batch->jobs[k];
        auto& result = batch->results[k];
        const bool opened = !result.is_error && has(pj.job.method->flags, method_flags::opens_stream);
        if (opened) session_.watches->bind_next(pj.job.id.dump());
        if (opened && !pj.has_slot) session_.watches->start_next();  // nothing to wait for
        if (pj.has_slot) {
            if (opened) slots_[pj.seq - first_seq_].watch_starts++;
            complete(pj.seq, pj.part, respond(pj.job, result));
        }
        result = job_result{};  // its answer is in the slot now: a batch's answers never exist twice
    }
    // Jobs the budget stopped go back to the front, in order, to run once the client has read.
    jobs_.insert(jobs_.begin(),
                 std::make_move_iterator(batch->jobs.begin() + static_cast<std::ptrdiff_t>(done)),
                 std::make_move_iterator(batch->jobs.end()));
    batch->jobs.clear();
    batch->results.clear();
    batch->batch_bytes.clear();
    batch->spent = 0;
    batch->runner = {};
    if (spare_batches_.size() < 4) spare_batches_.push_back(std::move(batch));
    pump();
}

void connection::complete(std::uint64_t seq, std::size_t part, std::optional<std::string> text) {
    if (stopped_ || seq < first_seq_) return;
    auto& s = slots_[seq - first_seq_];
    if (text) {
        s.bytes += text->size();
        held_bytes_ += text->size();
    }
    if (s.batch) {
        if (text) s.parts[part] = std::move(*text);
        --s.pending;
    } else {
        if (text) s.text = std::move(*text);
        s.pending = 0;
    }
}

void connection::move_ready() {
    // Notifications published before an answer was computed go out before that answer; those of
    // a new subscription go out right after its world.watch answer.
    // While some are still owed (the output bound is reached, or a resync is on its way), the
    // answers wait: on_write pumps again once the client has read.
    take_notifications();
    bool owed = session_.watches && session_.watches->owes();
    while (!slots_.empty() && slots_.front().pending == 0 && !owed) {
        auto& s = slots_.front();
        if (s.batch) {
            // One line, '[' a ',' b ... ']', its elements moved (not joined) into the output.
            bool first = true;
            for (auto& p : s.parts) {
                if (p.empty()) continue;  // notifications answer nothing, not even inside a batch
                append_out(first ? "[" : ",");
                first = false;
                push_out(std::move(p));
            }
            if (!first) append_out("]\n");
        } else if (!s.text.empty()) {
            push_out(std::move(s.text));
            append_out("\n");
        }
        held_bytes_ -= s.bytes;
        const auto starts = s.watch_starts;
        slots_.pop_front();
        ++first_seq_;
        for (std::uint32_t k = 0; k < starts; ++k) session_.watches->start_next();
        if (starts > 0) {
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
    // Notifications waiting in the watch sink count too: they are this client's output as well.
    if (output_account_ && !stopped_)
        services_.output.update(*output_account_,
                                buffered_bytes() + (session_.watches ? session_.watches->queued_bytes() : 0),
                                moved);
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
        push_slot(slot{protocol::make_error(nullptr, protocol::reason::timeout,
                                            "request line not finished within " + format_seconds(rt) + " s",
                                            {{"limit_s", rt}}),
                       {},
                       0,
                       false,
                       0});
        begin_drain("request timeout");
        if (!stopped_ && !lingering_) arm_idle_timer();
        return;
    }
    // Waiting on a world is not idleness; waiting on a client that does not read is.
    if (batch_in_flight_) last_activity_ = now;
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
    if (draining_ && !stopped_ && !lingering_ && slots_.empty() && !batch_in_flight_ && jobs_.empty() &&
        !write_in_flight_ && out_bytes_ == 0) {
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
    closed_.store(true, std::memory_order_relaxed);  // world strands stop computing for us
    if (session_.watches) session_.watches->close();
    if (output_account_) services_.output.close(output_account_);
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
