#include "hosting/agones_sdk.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "ecsd/protocol/version.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/world_directory.hpp"

namespace ecsd::net {
namespace {

using namespace std::chrono_literals;

/// A call the sidecar has not answered in this long is abandoned (and counts as failed).
constexpr auto call_timeout = 2s;
/// Ready is retried after 250 ms, then twice as long each time, up to 8 s.
constexpr std::chrono::steady_clock::duration first_backoff = 250ms;
constexpr std::chrono::steady_clock::duration max_backoff = 8s;
/// Labels are compared with the server's figures this often: at most one update per label a second.
constexpr std::chrono::steady_clock::duration label_interval = 1s;
/// An answer longer than this is cut off; the sidecar's answers are `{}` or a short error.
constexpr std::size_t max_response_bytes = std::size_t{64} * 1024;

std::chrono::steady_clock::duration doubled(std::chrono::steady_clock::duration d) {
    return std::min(d * 2, max_backoff);
}

double seconds_of(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

bool is_alnum(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

namespace agones {

bool is_valid_label_value(std::string_view value) noexcept {
    if (value.empty()) return true;
    if (value.size() > 63 || !is_alnum(value.front()) || !is_alnum(value.back())) return false;
    return std::ranges::all_of(value, [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

std::string make_request(std::string_view method, std::string_view path, std::string_view body,
                         std::uint16_t port) {
    std::string out;
    out.reserve(256 + body.size());
    out.append(method).append(" ").append(path).append(" HTTP/1.1\r\n");
    out.append("Host: localhost:").append(std::to_string(port)).append("\r\n");
    out.append("User-Agent: ecsd/").append(protocol::version).append("\r\n");
    out.append("Content-Type: application/json\r\nAccept: application/json\r\n");
    out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
    out.append("Connection: close\r\n\r\n").append(body);
    return out;
}

int response_status(std::string_view response) noexcept {
    // "HTTP/1.1 200 OK"
    if (!response.starts_with("HTTP/1.") || response.size() < 12 || response[8] != ' ') return 0;
    int status = 0;
    const auto digits = response.substr(9, 3);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), status);
    if (ec != std::errc() || end != digits.data() + digits.size() || status < 100 || status > 599) return 0;
    return status;
}

std::chrono::steady_clock::duration stall_limit(std::chrono::steady_clock::duration health_period) {
    return std::max<std::chrono::steady_clock::duration>(2s, health_period * 2);
}

}  // namespace agones

/// One request to the sidecar on a connection of its own: connect, write, read to the end, with
/// a deadline over all of it. `done` runs once, on the executor, with the status (0: no answer).
class agones_sdk::call : public std::enable_shared_from_this<agones_sdk::call> {
  public:
    call(const asio::any_io_executor& ex, std::string request)
        : socket_(ex), deadline_(ex), request_(std::move(request)) {}

    /// Sets what runs when the call ends; nullptr: nothing (a call abandoned by stop()).
    void set_done(call_done done) { done_ = std::move(done); }

    void start(std::uint16_t port) {
        deadline_.expires_after(call_timeout);
        deadline_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
            if (ec) return;
            self->timed_out_ = true;
            self->abandon();
        });
        // The sidecar listens on localhost: IPv4 first, then IPv6.
        const std::array endpoints{asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), port),
                                   asio::ip::tcp::endpoint(asio::ip::address_v6::loopback(), port)};
        asio::async_connect(
            socket_, endpoints,
            [self = shared_from_this()](const asio::error_code& ec, const asio::ip::tcp::endpoint&) {
                if (ec) return self->finish(0, ec.message());
                self->write();
            });
    }

    /// Closes the socket: the pending operation completes with an error.
    void abandon() {
        asio::error_code ignored;
        socket_.close(ignored);
        deadline_.cancel();
    }

  private:
    void write() {
        asio::async_write(socket_, asio::buffer(request_),
                          [self = shared_from_this()](const asio::error_code& ec, std::size_t) {
                              if (ec) return self->finish(0, ec.message());
                              self->read();
                          });
    }

    void read() {
        asio::async_read(socket_, asio::dynamic_buffer(response_, max_response_bytes),
                         [self = shared_from_this()](const asio::error_code& ec, std::size_t) {
                             // The sidecar closes after answering ("Connection: close"): eof is the
                             // end. Only the status line matters, so a cut-off answer still counts.
                             const int status = agones::response_status(self->response_);
                             if (status != 0) return self->finish(status, "");
                             self->finish(
                                 0, ec && ec != asio::error::eof ? ec.message() : "not an HTTP response");
                         });
    }

    void finish(int status, std::string error) {
        if (finished_) return;
        finished_ = true;
        deadline_.cancel();
        asio::error_code ignored;
        socket_.close(ignored);
        if (timed_out_) {
            status = 0;
            error = "no answer within " + std::to_string(std::chrono::seconds(call_timeout).count()) + " s";
        }
        if (done_) done_(status, error);
    }

    asio::ip::tcp::socket socket_;
    asio::steady_timer deadline_;
    std::string request_;
    std::string response_;
    call_done done_;
    bool finished_ = false;
    bool timed_out_ = false;
};

agones_sdk::agones_sdk(asio::io_context& io, world_directory& worlds,
                       const std::atomic<std::size_t>& connections_open, settings s)
    : strand_(asio::make_strand(io)),
      worlds_(worlds),
      connections_open_(connections_open),
      settings_(s),
      ready_timer_(strand_),
      health_timer_(strand_),
      label_timer_(strand_),
      ready_backoff_(first_backoff),
      labels_{{.key = "ecsd-worlds", .sent = "", .in_flight = false},
              {.key = "ecsd-connections", .sent = "", .in_flight = false}},
      label_backoff_(label_interval) {}

agones_sdk::~agones_sdk() = default;

void agones_sdk::start() {
    asio::dispatch(strand_, [this] {
        spdlog::info("agones: SDK on, sidecar at localhost:{} (Health every {} s)", settings_.port,
                     seconds_of(settings_.health_period));
        send_ready();
        arm_health();
        arm_labels(std::chrono::steady_clock::duration::zero());
    });
}

void agones_sdk::stop() {
    asio::dispatch(strand_, [this] {
        stopped_ = true;
        ready_timer_.cancel();
        health_timer_.cancel();
        label_timer_.cancel();
        for (const auto& c : in_flight_) {
            c->set_done(nullptr);
            c->abandon();
        }
        in_flight_.clear();
    });
}

void agones_sdk::send(std::string_view method, std::string_view path, std::string_view body, call_done done) {
    auto c = std::make_shared<call>(strand_, agones::make_request(method, path, body, settings_.port));
    // The completion takes the call off in_flight_, then reports; all on the strand.
    c->set_done([this, raw = c.get(), done = std::move(done)](int status, const std::string& error) {
        std::erase_if(in_flight_, [raw](const auto& p) { return p.get() == raw; });
        if (!stopped_) done(status, error);
    });
    in_flight_.push_back(c);
    c->start(settings_.port);
}

void agones_sdk::note_failure(std::string_view what, int status, const std::string& error) {
    const std::string why = status != 0 ? "HTTP " + std::to_string(status) : error;
    if (!sidecar_down_) {
        spdlog::warn("agones: {} failed: {} (sidecar at localhost:{}); ecsd keeps serving and retries", what,
                     why, settings_.port);
        sidecar_down_ = true;
    } else {
        spdlog::debug("agones: {} failed: {}", what, why);
    }
}

void agones_sdk::note_success() {
    if (!sidecar_down_) return;
    sidecar_down_ = false;
    spdlog::info("agones: the sidecar answers again");
}

void agones_sdk::send_ready() {
    send("POST", "/ready", "{}", [this](int status, const std::string& error) {
        if (status >= 200 && status < 300) {
            note_success();
            spdlog::info("agones: Ready");
            return;
        }
        note_failure("Ready", status, error);
        ready_timer_.expires_after(ready_backoff_);
        ready_backoff_ = doubled(ready_backoff_);
        ready_timer_.async_wait([this](const asio::error_code& ec) {
            if (!ec && !stopped_) send_ready();
        });
    });
}

void agones_sdk::arm_health() {
    health_timer_.expires_after(settings_.health_period);
    health_timer_.async_wait([this](const asio::error_code& ec) {
        if (ec || stopped_) return;
        on_health();
        arm_health();
    });
}

void agones_sdk::on_health() {
    const auto now = std::chrono::steady_clock::now();
    const auto limit = agones::stall_limit(settings_.health_period);
    std::vector<std::string> stuck;
    for (const auto& w : worlds_.all()) {
        if (now - w->last_beat() > limit) stuck.push_back(w->name());
        w->probe();  // a paused world is stamped by this probe, if its strand is free
    }
    if (!stuck.empty()) {
        if (!stuck_reported_) {
            spdlog::warn("agones: Health withheld: the tick loop of world '{}'{} has not run for over {} s",
                         stuck.front(),
                         stuck.size() > 1 ? " and " + std::to_string(stuck.size() - 1) + " more" : "",
                         seconds_of(limit));
            stuck_reported_ = true;
        }
        return;
    }
    if (stuck_reported_) {
        spdlog::info("agones: every world ticks again; Health resumes");
        stuck_reported_ = false;
    }
    if (health_in_flight_) return;  // the last ping is still unanswered: no pile-up
    health_in_flight_ = true;
    send("POST", "/health", "{}", [this](int status, const std::string& error) {
        health_in_flight_ = false;
        if (status >= 200 && status < 300) {
            note_success();
        } else {
            note_failure("Health", status, error);
        }
    });
}

void agones_sdk::arm_labels(std::chrono::steady_clock::duration after) {
    label_timer_.expires_after(after);
    label_timer_.async_wait([this](const asio::error_code& ec) {
        if (ec || stopped_) return;
        on_labels();
    });
}

void agones_sdk::on_labels() {
    const std::array values{std::to_string(worlds_.size()),
                            std::to_string(connections_open_.load(std::memory_order_relaxed))};
    for (std::size_t i = 0; i < labels_.size(); ++i) {
        auto& l = labels_[i];
        const auto& value = values.at(i);
        if (l.in_flight || l.sent == value) continue;
        if (!agones::is_valid_label_value(value)) {  // never with counts; kept for any label added later
            spdlog::error("agones: label {}={} is not a valid label value; not sent", l.key, value);
            continue;
        }
        l.in_flight = true;
        send("PUT", "/metadata/label", nlohmann::json{{"key", l.key}, {"value", value}}.dump(),
             [this, i, value](int status, const std::string& error) {
                 auto& sent = labels_[i];
                 sent.in_flight = false;
                 if (status >= 200 && status < 300) {
                     note_success();
                     sent.sent = value;
                     label_backoff_ = label_interval;
                 } else {
                     note_failure("SetLabel " + sent.key, status, error);
                     label_backoff_ = doubled(label_backoff_);
                 }
             });
    }
    arm_labels(label_backoff_);
}

bool agones_sdk::shutdown(std::uint16_t port, std::chrono::milliseconds timeout) {
    asio::io_context io;
    int answer = 0;
    std::string failure = "no answer";
    auto c = std::make_shared<call>(io.get_executor(), agones::make_request("POST", "/shutdown", "{}", port));
    c->set_done([&](int status, const std::string& error) {
        answer = status;
        failure = error;
    });
    c->start(port);
    c.reset();
    io.run_for(timeout);
    if (answer >= 200 && answer < 300) {
        spdlog::info("agones: Shutdown");
        return true;
    }
    spdlog::warn("agones: Shutdown failed: {} (sidecar at localhost:{})",
                 answer != 0 ? "HTTP " + std::to_string(answer) : failure, port);
    return false;
}

}  // namespace ecsd::net
