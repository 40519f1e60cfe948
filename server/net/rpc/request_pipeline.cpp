#include "rpc/request_pipeline.hpp"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "hosting/hosted_world.hpp"
#include "hosting/watch.hpp"
#include "rpc/services.hpp"

namespace ecsd::net {
namespace {

/// A result already text and at least this long becomes its response in place (respond()). A
/// query page of 100 entities (13 KB) was copied into a new string for its envelope, then into
/// the connection's buffer: copies and the allocator were 12% of its server CPU (these among them).
constexpr std::size_t in_place_bytes = std::size_t{2} * 1024;

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
    if (!r.is_error && r.text.size() >= in_place_bytes) {
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

}  // namespace

request_pipeline::request_pipeline(server_services& services, dispatcher& dispatch, session& caller,
                                   asio::any_io_executor home, std::function<void()> resume)
    : services_(services),
      dispatch_(dispatch),
      session_(caller),
      home_(std::move(home)),
      resume_(std::move(resume)) {
    parse_limits_.max_batch = services.config.max_batch;
    parse_limits_.entity_read_method = services.methods.entity_read_method();
}

bool request_pipeline::has_room(std::size_t unsent) const noexcept {
    const auto& cfg = services_.config;
    return held_bytes_ + unsent < cfg.max_output_bytes && slots_.size() < cfg.max_pipeline &&
           jobs_.size() < cfg.max_pipeline;
}

std::uint64_t request_pipeline::push_slot(slot s) {
    s.bytes = s.text.size();
    for (const auto& p : s.parts) s.bytes += p.size();
    held_bytes_ += s.bytes;
    slots_.push_back(std::move(s));
    return first_seq_ + slots_.size() - 1;
}

void request_pipeline::answer_now(std::string text) {
    slot s;
    s.text = std::move(text);
    push_slot(std::move(s));
}

void request_pipeline::submit(std::string_view text) {
    auto parsed = protocol::parse_line(text, parse_limits_);
    if (!parsed.batch) {
        auto& m = parsed.messages.front();
        if (auto* bad = std::get_if<protocol::bad_message>(&m)) {
            spdlog::info("{} {}: {}: {}", session_.lines ? "conn" : "http", session_.id,
                         protocol::name(bad->why), bad->detail);
            answer_now(protocol::make_error(bad->id, bad->why, bad->detail, bad->data));
            return;
        }
        auto& req = std::get<protocol::request>(m);
        const bool notification = req.notification;
        auto p = dispatch_.prepare(std::move(req), session_);
        if (p.job) {
            std::uint64_t seq = 0;
            if (!notification) {
                slot s;
                s.pending = 1;
                seq = push_slot(std::move(s));
            }
            jobs_.push_back(pending_job{std::move(*p.job), seq, 0, !notification, false});
        } else if (p.response) {
            answer_now(std::move(*p.response));
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
            // The batch's answer leaves whole: past the bound its elements are not run.
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

void request_pipeline::run_jobs(const std::shared_ptr<request_pipeline>& self, std::size_t unsent) {
    // One batch of jobs in flight at a time: consecutive jobs for the same world travel together
    // (one post there and one back, however deep the pipeline), and the batch may produce only
    // as many answer bytes as the output bound has room for. Batches are recycled: a fresh
    // kilobyte-sized vector per post made glibc consolidate its fastbins on every read.
    auto& p = *self;
    if (p.batch_in_flight_ || p.jobs_.empty() || p.closed_.load(std::memory_order_relaxed)) return;
    const std::size_t limit = p.services_.config.max_output_bytes;
    const std::size_t held = p.held_bytes_ + unsent;
    const auto& first = p.jobs_.front();
    // The first job may always run when nothing it would wait behind is unsent past the bound:
    // its answer is what lets the slots behind it go out.
    const bool head_may_run = (!first.has_slot || first.seq == p.first_seq_) && unsent < limit;
    const std::size_t budget = held < limit ? limit - held : 0;
    if (budget == 0 && !head_may_run) return;  // resumed by the face once the client reads

    std::unique_ptr<job_batch> batch;
    if (p.spare_batches_.empty()) {
        batch = std::make_unique<job_batch>();
    } else {
        batch = std::move(p.spare_batches_.back());
        p.spare_batches_.pop_back();
    }
    batch->budget = budget;
    batch->head_may_run = head_may_run;
    const auto* world = first.job.world.get();
    while (!p.jobs_.empty() && p.jobs_.front().job.world.get() == world) {
        auto& pj = p.jobs_.front();
        if (pj.in_batch && std::none_of(batch->batch_bytes.begin(), batch->batch_bytes.end(),
                                        [&](const auto& e) { return e.first == pj.seq; })) {
            batch->batch_bytes.emplace_back(pj.seq, p.slots_[pj.seq - p.first_seq_].bytes);
        }
        batch->jobs.push_back(std::move(pj));
        p.jobs_.pop_front();
    }
    p.batch_in_flight_ = true;
    auto& strand = batch->jobs.front().job.world->strand();
    asio::post(strand, [owner = self, batch = std::move(batch)]() mutable {
        run_batch(std::move(owner), std::move(batch));
    });
}

void request_pipeline::run_batch(std::shared_ptr<request_pipeline> self, std::unique_ptr<job_batch> batch) {
    // On the world's strand. Runs jobs in order until the batch is done, its output budget is
    // spent (the rest goes back to the queue), the connection is gone (the rest is dropped), or
    // its time slice is used up (the rest is posted again, behind due ticks).
    const auto started = job_runner::clock::now();
    auto now = started;  // moved on by each job (job_runner::next): a job's time runs from the last one's end
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

        auto done = batch->runner.next(self->dispatch_, pj.job, now);
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
            std::chrono::duration<double>(now - started).count() >= job_runner::slice_seconds) {
            repost();
            return;
        }
    }
    publish();
    auto home = self->home_;
    asio::post(home, [self = std::move(self), batch = std::move(batch)]() mutable {
        self->on_jobs_done(std::move(batch));
    });
}

void request_pipeline::on_jobs_done(std::unique_ptr<job_batch> batch) {
    batch_in_flight_ = false;
    if (closed_.load(std::memory_order_relaxed)) return;
    const std::size_t done = batch->results.size();
    for (std::size_t k = 0; k < done; ++k) {
        auto& pj = batch->jobs[k];
        auto& result = batch->results[k];
        const bool opened = !result.is_error && has(pj.job.method->flags, method_flags::opens_stream);
        if (opened) session_.watches->bind_next(pj.job.id.dump());
        if (opened && !pj.has_slot) {
            // A watch opened by a notification has no answer to wait for: on a line connection
            // its notifications begin now; elsewhere (HTTP) it has no stream and ends unheard.
            if (session_.lines) {
                session_.watches->start_next();
            } else {
                session_.watches->end_next();
            }
        }
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
    resume_();
}

void request_pipeline::complete(std::uint64_t seq, std::size_t part, std::optional<std::string> text) {
    if (seq < first_seq_) return;
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

request_pipeline::answer request_pipeline::pop() {
    auto& s = slots_.front();
    answer a{std::move(s.text), std::move(s.parts), s.batch, s.watch_starts};
    held_bytes_ -= s.bytes;
    slots_.pop_front();
    ++first_seq_;
    return a;
}

void request_pipeline::close() noexcept {
    closed_.store(true, std::memory_order_relaxed);
}

}  // namespace ecsd::net
