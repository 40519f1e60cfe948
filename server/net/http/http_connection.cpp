#include "http/http_connection.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <random>

#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include "ecsd/protocol/jsonrpc.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/watch.hpp"
#include "http/http_server.hpp"
#include "http/viewer_page.hpp"
#include "rpc/services.hpp"
#include "rpc/token_check.hpp"
#include "socket_options.hpp"

namespace ecsd::net {
namespace {

constexpr std::size_t read_chunk = std::size_t{64} * 1024;
constexpr auto heartbeat = std::chrono::seconds(15);
/// An event stream with --max-output-bytes unsent and no write progress for this long is dropped.
constexpr auto stalled_stream = std::chrono::seconds(1);

/// Sent with every answer: no page may frame one (clickjacking), and no browser may read an
/// answer as anything but its declared type.
constexpr std::string_view safety_headers = "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n";

std::chrono::steady_clock::duration seconds(double s) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

std::int64_t steady_ns(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

/// Whether a Content-Type names application/json (parameters such as charset allowed).
bool is_json(std::string_view content_type) {
    const auto type = content_type.substr(0, content_type.find(';'));
    const auto end = type.find_last_not_of(" \t");
    constexpr std::string_view json = "application/json";
    if (end == std::string_view::npos || end + 1 != json.size()) return false;
    return std::equal(json.begin(), json.end(), type.begin(),
                      [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
}

/// A fresh script nonce for the viewer's Content-Security-Policy: 128 random bits, in hex.
std::string make_nonce() {
    std::random_device random;
    std::string out;
    constexpr std::string_view digits = "0123456789abcdef";
    for (int i = 0; i < 4; ++i) {
        const auto word = static_cast<std::uint32_t>(random());
        for (int shift = 28; shift >= 0; shift -= 4)
            out += digits[(word >> static_cast<unsigned>(shift)) & 0xfU];
    }
    return out;
}

/// The viewer's policy: its one inline script (by nonce) and inline styles, requests to its own
/// origin only (JSON-RPC and event streams), nothing loaded from elsewhere, no frame around it.
std::string viewer_headers(std::string_view nonce) {
    return "Content-Security-Policy: default-src 'none'; script-src 'nonce-" + std::string(nonce) +
           "'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; "
           "form-action 'none'; frame-ancestors 'none'\r\nReferrer-Policy: no-referrer\r\n";
}

/// Skips the JSON value that begins at `i` (after whitespace); returns the index just past it,
/// or npos when the text ends first. Strings are skipped whole and nesting is counted, so what a
/// value holds (a component named "error", a field "ended") is never read as structure.
std::size_t skip_value(std::string_view t, std::size_t i) {
    std::size_t depth = 0;
    while (i < t.size()) {
        const char c = t[i];
        if (c == '"') {
            for (++i; i < t.size() && t[i] != '"'; ++i) {
                if (t[i] == '\\') ++i;
            }
            if (i >= t.size()) return std::string_view::npos;
            ++i;
        } else if (c == '{' || c == '[') {
            ++depth;
            ++i;
        } else if (c == '}' || c == ']') {
            if (depth == 0) return i;  // the end of the enclosing object: a scalar ended here
            --depth;
            ++i;
        } else if (depth == 0 && c == ',') {
            return i;
        } else {
            ++i;
        }
        if (depth == 0 && (c == '"' || c == '}' || c == ']')) return i;
    }
    return depth == 0 ? i : std::string_view::npos;
}

void skip_space(std::string_view t, std::size_t& i) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n')) ++i;
}

/// Reads `"key":` at `i` (just past '{' or ','), leaving `i` at the value; false when no key is there.
bool read_key(std::string_view t, std::size_t& i, std::string_view& key) {
    skip_space(t, i);
    if (i >= t.size() || t[i] != '"') return false;
    const auto end = skip_value(t, i);
    if (end == std::string_view::npos) return false;
    key = t.substr(i + 1, end - i - 2);
    i = end;
    skip_space(t, i);
    if (i >= t.size() || t[i] != ':') return false;
    ++i;
    skip_space(t, i);
    return true;
}

/// After a member's value: true, past the ',', when another member follows.
bool more_members(std::string_view t, std::size_t& i) {
    skip_space(t, i);
    if (i >= t.size() || t[i] != ',') return false;
    ++i;
    return true;
}

}  // namespace

bool ends_event_stream(std::string_view line) {
    // A stream ends with its watch: a world.watch notification whose params say "ended": true, or
    // a +watch stream's closing error response. Only the envelope's own members and those of its
    // params are read; what values hold (a component named "error", a field "ended") is skipped
    // whole, and a result, which holds the world's data, is not looked into at all. A watch's
    // last notification has only scalar members (watch_sink::end: tick, ended, reason, moved_to),
    // so params whose members reach an array or object (a diff's entered, a resync's entities)
    // are a diff or a state: read no further, a large event costs only its first members.
    std::size_t i = 0;
    skip_space(line, i);
    if (i >= line.size() || line[i] != '{') return false;
    ++i;
    std::string_view key;
    while (read_key(line, i, key)) {
        if (key == "error") return true;
        if (key == "result") return false;
        if (key == "params" && i < line.size() && line[i] == '{') {
            ++i;
            std::string_view member;
            while (read_key(line, i, member)) {
                if (i < line.size() && (line[i] == '[' || line[i] == '{')) return false;
                const auto end = skip_value(line, i);
                if (end == std::string_view::npos) return false;
                auto value = line.substr(i, end - i);
                value = value.substr(0, value.find_last_not_of(" \t\r\n") + 1);
                if (member == "ended" && value == "true") return true;
                i = end;
                if (!more_members(line, i)) break;
            }
            skip_space(line, i);
            if (i >= line.size() || line[i] != '}') return false;
            ++i;
        } else {
            const auto end = skip_value(line, i);
            if (end == std::string_view::npos) return false;
            i = end;
        }
        if (!more_members(line, i)) return false;
    }
    return false;
}

namespace {

std::string_view status_text(int status) {
    switch (status) {
        case 101:
            return "Switching Protocols";
        case 426:
            return "Upgrade Required";
        case 200:
            return "OK";
        case 204:
            return "No Content";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 408:
            return "Request Timeout";
        case 413:
            return "Content Too Large";
        case 429:
            return "Too Many Requests";
        case 431:
            return "Request Header Fields Too Large";
        case 503:
            return "Service Unavailable";
        default:
            return "Error";
    }
}

/// Whether a comma-separated header value holds `token`, compared without case (Connection: keep-alive,
/// Upgrade).
bool has_token(std::string_view list, std::string_view token) {
    std::size_t start = 0;
    while (start <= list.size()) {
        auto end = list.find(',', start);
        if (end == std::string_view::npos) end = list.size();
        auto item = list.substr(start, end - start);
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
        if (item.size() == token.size() &&
            std::equal(item.begin(), item.end(), token.begin(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) ==
                       std::tolower(static_cast<unsigned char>(b));
            }))
            return true;
        start = end + 1;
    }
    return false;
}

/// Sec-WebSocket-Accept for a client's key: base64(SHA-1(key + the RFC's GUID)), RFC 6455 4.2.2.
std::string websocket_accept(std::string_view key) {
    const std::string text = std::string(key) + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    if (EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha1(), nullptr) != 1)
        throw std::runtime_error("SHA-1 failed (OpenSSL)");
    std::array<unsigned char, 64> out{};
    const int n = EVP_EncodeBlock(out.data(), digest.data(), static_cast<int>(length));
    return {reinterpret_cast<const char*>(out.data()), static_cast<std::size_t>(n)};
}

/// A key is the base64 of 16 bytes: 22 characters and "==".
bool valid_websocket_key(std::string_view key) {
    if (key.size() != 24 || !key.ends_with("==")) return false;
    return std::all_of(key.begin(), key.end() - 2, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '/';
    });
}

}  // namespace

http_connection::http_connection(asio::ip::tcp::socket socket, server_services& services,
                                 dispatcher& dispatch, http_server& owner, std::uint64_t id)
    : socket_(std::move(socket)),
      strand_(socket_.get_executor()),
      timer_(strand_),
      services_(services),
      dispatch_(dispatch),
      owner_(owner),
      parser_(services.config.max_line_bytes),
      pipeline_(services, dispatch, session_, strand_, [this] { advance_rpc(); }) {
    session_.id = id;
    session_.lines = false;  // HTTP: notifications only inside an event stream
    session_.face = "http";
    asio::error_code ec;
    const auto ep = socket_.remote_endpoint(ec);
    session_.peer = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
    session_.authenticated = !services.config.auth_required();
}

void http_connection::start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
        tune_socket(self->socket_);
        self->session_.watches = watch_sink::for_connection(
            self->services_.config, self->services_.watch_views, [weak = self->weak_from_this()] {
                // defer: called on a network thread (a world's publish, a request), it queues
                // the pump behind that thread's handler instead of waking another thread for it.
                if (auto c = weak.lock()) asio::defer(c->strand_, [c] { c->pump_stream(); });
            });
        self->output_account_ = self->services_.output.open([weak = self->weak_from_this()] {
            if (auto c = weak.lock()) {
                asio::post(c->strand_, [c] {
                    if (c->stopped_) return;
                    spdlog::warn(
                        "http {}: closed to keep --max-output-total: {} bytes unsent, the slowest reader",
                        c->session_.id, c->unsent());
                    c->close("slow reader (--max-output-total)");
                });
            }
        });
        self->last_activity_ = std::chrono::steady_clock::now();
        self->services_.clients.update(self->session_);
        self->note_idle(true);
        self->arm_timer();
        self->do_read();
    });
}

void http_connection::stop() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->close("stopped"); });
}

void http_connection::evict() {
    idle_since_.store(0, std::memory_order_relaxed);  // never picked twice
    stalled_since_.store(0, std::memory_order_relaxed);
    asio::dispatch(strand_, [self = shared_from_this()] {
        if (self->stopped_ || self->close_after_write_) return;
        if (self->request_open_) {
            spdlog::warn("http {}: stalled mid-request at the connection limit, closing it to make room",
                         self->session_.id);
            self->request_open_ = false;
            self->fail(408, "closed to make room for another client: request not finished");
        } else if (!self->busy_ && !self->streaming_ && self->unsent() == 0) {
            spdlog::info("http {}: idle at the connection limit, closing it to make room", self->session_.id);
            self->close("evicted at the connection limit");
        }
        // Otherwise a request arrived meanwhile: it is answered, and the newcomer is served anyway.
    });
}

void http_connection::note_idle(bool idle) {
    // Idle: nothing begun, nothing owed; the first a full server closes to make room.
    idle_since_.store(idle ? steady_ns(std::chrono::steady_clock::now()) : 0, std::memory_order_relaxed);
}

// --- reading and parsing ---------------------------------------------------------------------

void http_connection::do_read() {
    if (reading_ || stopped_ || busy_ || streaming_ || close_after_write_) return;
    if (unsent() >= services_.config.max_output_bytes) return;  // resumed by on_write
    reading_ = true;
    auto buffer = std::make_shared<std::array<char, read_chunk>>();
    socket_.async_read_some(asio::buffer(*buffer),
                            [self = shared_from_this(), buffer](const asio::error_code& ec, std::size_t n) {
                                self->reading_ = false;
                                self->services_.bytes_in.fetch_add(n, std::memory_order_relaxed);
                                if (!ec) self->in_.append(buffer->data(), n);
                                self->on_read(ec, n);
                            });
}

void http_connection::on_read(const asio::error_code& ec, std::size_t) {
    if (stopped_) return;
    if (ec) {
        close(ec == asio::error::eof ? "client closed" : ec.message());
        return;
    }
    last_activity_ = std::chrono::steady_clock::now();
    parse();
    do_read();
}

void http_connection::parse() {
    while (!in_.empty() && !busy_ && !stopped_ && !streaming_ && !close_after_write_ &&
           unsent() < services_.config.max_output_bytes) {
        const auto step = parser_.execute(in_);
        if (step.began) {
            request_open_ = true;
            request_began_ = std::chrono::steady_clock::now();
            note_idle(false);
            stalled_since_.store(steady_ns(request_began_), std::memory_order_relaxed);
        }
        if (step.complete) {
            request_open_ = false;
            stalled_since_.store(0, std::memory_order_relaxed);
            keep_alive_ = parser_.keep_alive();
        }
        if (step.error != 0) {
            stalled_since_.store(0, std::memory_order_relaxed);
            if (step.error == 413) {
                // The TCP port's answer to a line over the limit, in a 413: same reason, same data.
                const auto limit = services_.config.max_line_bytes;
                spdlog::info("http {}: 413 {}", session_.id, step.why);
                keep_alive_ = false;
                busy_ = true;
                respond(413, "application/json",
                        protocol::make_error(nullptr, protocol::reason::too_large,
                                             "body longer than " + std::to_string(limit) + " bytes",
                                             {{"limit", limit}}) +
                            "\n");
                return;
            }
            fail(step.error, step.why);
            return;
        }
        in_.erase(0, step.consumed);
        if (step.head && !check_head()) return;  // refused before its body was read
        if (!step.complete) {
            if (step.head) continue;  // on with the body
            return;                   // need more bytes
        }
        handle();
    }
}

// --- requests --------------------------------------------------------------------------------

bool http_connection::check_head() {
    refusal_ = 0;
    head_authorized_ = false;
    const auto method = parser_.method();
    const auto& host = parser_.host();
    const auto& origin = parser_.origin();
    if (!owner_.host_allowed(host)) {
        // DNS rebinding: a page of another site, its name now pointing here, would be same-origin.
        refusal_ = 403;
        refusal_why_ = "this server does not answer to that Host name (--http-allow-host allows more)";
    } else if (origin && !owner_.origin_allowed(*origin, host)) {
        refusal_ = 403;
        refusal_why_ = "requests from pages of other origins are refused (--http-allow-origin allows more)";
    } else if (method == HTTP_OPTIONS && origin) {
        refusal_ = 403;  // a CORS preflight: there is no CORS, so no page of another origin gets further
        refusal_why_ = "cross-origin requests are refused: this server sends no CORS headers";
    } else if (method == HTTP_POST && origin && !is_json(parser_.content_type())) {
        // Only a type a form or a simple fetch can send needs no preflight: a page must send JSON.
        refusal_ = 403;
        refusal_why_ = "a POST from a web page must be Content-Type: application/json";
    }
    // A body this large is never read unless the request may go on: the refusal goes out now, and
    // the connection closes (with the body unread it could not go on).
    const auto length = parser_.body_length();
    const bool large = !length || *length > services_.config.preauth_line_bytes;
    if (!large) return true;  // refused (if so) once the body is in, on a connection that stays
    if (refusal_ != 0) {
        spdlog::info("http {}: {} {} from {}: {}", session_.id, refusal_, http_method_str(method),
                     session_.peer, refusal_why_);
        request_open_ = false;
        stalled_since_.store(0, std::memory_order_relaxed);
        keep_alive_ = false;
        refuse(refusal_, refusal_why_);
        return false;
    }
    if (services_.config.auth_required()) {
        // Without the token only --preauth-line-bytes of body are read, as on the TCP port.
        keep_alive_ = false;  // set again when the message completes; a refusal closes
        if (!authorize()) {
            request_open_ = false;
            stalled_since_.store(0, std::memory_order_relaxed);
            return false;
        }
        head_authorized_ = true;
    }
    return true;
}

void http_connection::refuse(int status, std::string_view why) {
    respond(status, "application/json",
            protocol::make_error(nullptr, protocol::reason::unauthorized, why) + "\n");
}

void http_connection::handle() {
    busy_ = true;
    if (refusal_ != 0) {
        spdlog::info("http {}: {} {} from {}: {}", session_.id, refusal_, http_method_str(parser_.method()),
                     session_.peer, refusal_why_);
        refuse(refusal_, refusal_why_);
        return;
    }
    const std::string path = parser_.url().substr(0, parser_.url().find('?'));
    const auto method = parser_.method();
    if (path == "/ws") {
        upgrade_websocket();
        return;
    }
    if (path != "/") {
        respond(404, "text/plain",
                "not found: this server answers GET / (the viewer), POST / (JSON-RPC) and GET /ws "
                "(WebSocket)\n");
        return;
    }
    if (method == HTTP_GET || method == HTTP_HEAD) {
        const auto nonce = make_nonce();
        std::string page(viewer_page());
        if (const auto at = page.find("<script>"); at != std::string::npos)
            page.insert(at + std::string_view("<script").size(), " nonce=\"" + nonce + "\"");
        if (method == HTTP_GET) {
            respond(200, "text/html; charset=utf-8", page, viewer_headers(nonce));
            return;
        }
        // HEAD: the GET's head, its length, no body.
        write("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " +
              std::to_string(page.size()) + "\r\n" + std::string(safety_headers) + viewer_headers(nonce) +
              (keep_alive_ ? "" : "Connection: close\r\n") + "\r\n");
        after_response();
        return;
    }
    if (method != HTTP_POST) {
        respond(405, "text/plain", "use GET / for the viewer or POST / for JSON-RPC\n",
                "Allow: GET, HEAD, POST\r\n");
        return;
    }
    if (!head_authorized_ && !authorize()) return;
    handle_rpc();
}

bool http_connection::authorize() {
    if (!services_.config.auth_required()) return true;
    const std::string_view prefix = "Bearer ";
    const std::string_view got = parser_.authorization();
    // A request with no token at all guesses nothing: it is told how to send one. A token is
    // checked as server.auth checks it (one limiter for TCP and HTTP), so HTTP is no faster way
    // to guess.
    std::optional<protocol::rpc_error> refused;
    if (got.starts_with(prefix)) {
        refused = check_token(services_, session_, got.substr(prefix.size()));
    } else {
        refused.emplace(protocol::reason::unauthorized, "send the token as Authorization: Bearer TOKEN");
    }
    if (!refused) return true;
    if (session_.close_requested) keep_alive_ = false;
    const auto body = protocol::make_error(nullptr, refused->why(), refused->what(), refused->data()) + "\n";
    if (refused->why() == protocol::reason::rate_limited) {
        const double wait = refused->data().value("retry_after", 1.0);
        respond(429, "application/json", body,
                "Retry-After: " + std::to_string(static_cast<long>(std::ceil(wait))) + "\r\n");
    } else {
        respond(401, "application/json", body, "WWW-Authenticate: Bearer realm=\"ecsd\"\r\n");
    }
    return false;
}

void http_connection::upgrade_websocket() {
    // Host and Origin were judged on the head (check_head), as for any request: a page of another
    // origin cannot open one (browsers send Origin with every WebSocket, and no CORS applies).
    keep_alive_ = false;  // any answer but 101 ends the connection
    if (parser_.method() != HTTP_GET) {
        respond(405, "text/plain", "a WebSocket opens with GET /ws\n", "Allow: GET\r\n");
        return;
    }
    if (!has_token(parser_.upgrade(), "websocket") || !has_token(parser_.connection(), "upgrade")) {
        respond(426, "text/plain",
                "GET /ws is a WebSocket: send Upgrade: websocket and Connection: Upgrade\n",
                "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n");
        return;
    }
    if (parser_.websocket_version() != "13") {
        respond(426, "text/plain", "this server speaks WebSocket version 13 (RFC 6455)\n",
                "Sec-WebSocket-Version: 13\r\n");
        return;
    }
    if (!valid_websocket_key(parser_.websocket_key())) {
        respond(400, "text/plain", "Sec-WebSocket-Key must be the base64 of 16 bytes\n");
        return;
    }
    // A token in the Authorization header (Node, scripts) is checked now, as for POST; a browser
    // cannot send one, so without it the socket opens unauthenticated and server.auth comes first,
    // as on the TCP port.
    if (services_.config.auth_required() && !parser_.authorization().empty() && !authorize()) return;
    handover_ = std::make_unique<websocket_handover>();
    handover_->response =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Accept: " +
        websocket_accept(parser_.websocket_key()) + "\r\n\r\n";
    handover_->early_input = std::move(in_);  // frames sent right after the upgrade request
    in_.clear();
    if (unsent() == 0 && !write_in_flight_) hand_over();  // else once the earlier answers are written
}

void http_connection::hand_over() {
    auto h = std::move(handover_);
    h->from = session_;
    h->from.watches.reset();
    if (!owner_.hand_over(socket_, *h)) {
        spdlog::warn("http {}: WebSocket refused: {} connections open (--max-connections)", session_.id,
                     services_.config.max_connections);
        respond(503, "text/plain", "too many connections (--max-connections)\n");
        return;
    }
    spdlog::debug("http {}: upgraded to WebSocket", session_.id);
    // The socket is the new connection's now: this one only lets go of what it holds.
    stopped_ = true;
    note_idle(false);
    stalled_since_.store(0, std::memory_order_relaxed);
    timer_.cancel();
    pipeline_.close();
    if (session_.watches) session_.watches->close();
    if (output_account_) services_.output.close(output_account_);
    services_.clients.remove(session_);
    owner_.remove(shared_from_this());
}

void http_connection::handle_rpc() {
    pipeline_.submit(parser_.body());
    advance_rpc();
}

void http_connection::advance_rpc() {
    // One request at a time: its elements run through the pipeline as a TCP line's do (the same
    // limits, reasons and world hop); once its whole answer is ready it goes out as one response.
    if (stopped_ || !busy_ || streaming_) return;
    if (pipeline_.ready()) {
        finish_rpc(pipeline_.pop());
        return;
    }
    if (pipeline_.idle()) {  // notifications only, all run: nothing to answer (204)
        finish_rpc({});
        return;
    }
    request_pipeline::run_jobs(std::shared_ptr<request_pipeline>(shared_from_this(), &pipeline_), unsent());
}

void http_connection::finish_rpc(request_pipeline::answer a) {
    if (stopped_) return;
    if (!a.batch && a.watch_starts == 1 && !a.text.empty()) {
        start_stream(std::move(a.text));
        return;
    }
    std::string body;
    if (a.batch) {
        for (auto& p : a.parts) {
            if (p.empty()) continue;
            body += body.empty() ? '[' : ',';
            body += p;
        }
        if (!body.empty()) body += ']';
    } else {
        body = std::move(a.text);
    }
    // Watches answered inside a batch (or a JSON answer) have no stream: end them now, so they
    // neither count against --max-watches nor cost the world anything for the connection's life.
    for (std::uint32_t k = 0; k < a.watch_starts; ++k) session_.watches->end_next();
    if (body.empty()) {
        respond(204, "application/json", {});
        return;
    }
    body += '\n';
    respond(200, "application/json", std::move(body));
}

void http_connection::start_stream(std::string first) {
    streaming_ = true;
    spdlog::debug("http {}: event stream", session_.id);
    first.insert(0,
                 "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                 "Connection: keep-alive\r\nX-Accel-Buffering: no\r\n" +
                     std::string(safety_headers) + "\r\ndata: ");
    first += "\n\n";
    write(first);
    session_.watches->start_next();  // the answer is out: its notifications may follow
    pump_stream();
}

void http_connection::pump_stream() {
    if (!streaming_ || stopped_ || close_after_write_) return;
    const std::size_t room = session_.watches->room(unsent());
    if (room == 0) {  // the sink coalesces meanwhile; on_write pumps again
        note_output(false);
        return;
    }
    std::string lines;
    session_.watches->take(lines, room);
    std::size_t start = 0;
    while (start < lines.size()) {
        const auto end = lines.find('\n', start);
        const std::string_view line(lines.data() + start,
                                    (end == std::string::npos ? lines.size() : end) - start);
        out_ += "data: ";
        out_ += line;
        out_ += "\n\n";
        // The watch is over (ended, or a BRP stream's closing error): so is the stream.
        if (ends_event_stream(line)) close_after_write_ = true;
        if (end == std::string::npos) break;
        start = end + 1;
    }
    if (!out_.empty() && !write_in_flight_) do_write();
    note_output(false);
}

// --- writing ---------------------------------------------------------------------------------

void http_connection::respond(int status, std::string_view content_type, std::string_view body,
                              std::string_view extra_headers) {
    std::string head = "HTTP/1.1 " + std::to_string(status) + " " + std::string(status_text(status)) + "\r\n";
    if (!content_type.empty() && status != 204) {
        head += "Content-Type: ";
        head += content_type;
        head += "\r\n";
    }
    if (status != 204) head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    head += safety_headers;
    head += extra_headers;
    if (!keep_alive_) head += "Connection: close\r\n";
    head += "\r\n";
    head += body;
    write(head);
    after_response();
}

void http_connection::fail(int status, std::string_view message) {
    spdlog::info("http {}: {} {}", session_.id, status, message);
    keep_alive_ = false;
    busy_ = true;
    respond(status, "text/plain", std::string(message) + "\n");
}

void http_connection::after_response() {
    busy_ = false;
    if (!keep_alive_) {
        close_after_write_ = true;
        return;
    }
    // A pipelined request may be waiting; posted, so a long pipeline does not recurse.
    asio::post(strand_, [self = shared_from_this()] {
        self->parse();
        self->do_read();
    });
}

void http_connection::write(std::string_view bytes) {
    out_ += bytes;
    if (!write_in_flight_) do_write();
    note_output(false);
}

void http_connection::note_output(bool moved) {
    if (output_account_ && !stopped_)
        services_.note_output(*output_account_, unsent(), session_.watches.get(), moved);
}

void http_connection::do_write() {
    if (stopped_ || out_.empty()) return;
    writing_.clear();
    write_pos_ = 0;
    std::swap(out_, writing_);
    write_in_flight_ = true;
    socket_.async_write_some(
        asio::buffer(writing_),
        [self = shared_from_this()](const asio::error_code& ec, std::size_t n) { self->on_write(ec, n); });
}

void http_connection::on_write(const asio::error_code& ec, std::size_t n) {
    if (!services_.write_completed(stopped_, write_in_flight_, ec, n,
                                   [this](const std::string& why) { close(why); }))
        return;
    write_pos_ += n;
    last_activity_ = std::chrono::steady_clock::now();
    note_output(true);
    if (write_pos_ < writing_.size()) {
        socket_.async_write_some(
            asio::buffer(writing_.data() + write_pos_, writing_.size() - write_pos_),
            [self = shared_from_this()](const asio::error_code& e, std::size_t m) { self->on_write(e, m); });
        return;
    }
    write_in_flight_ = false;
    if (!out_.empty()) {
        do_write();
        return;
    }
    if (handover_) {  // an upgrade waited for the answers before it
        writing_.clear();
        write_pos_ = 0;
        hand_over();
        return;
    }
    if (writing_.capacity() > std::size_t{256} * 1024) writing_ = std::string();
    writing_.clear();
    write_pos_ = 0;  // unsent() counts from here: a stale position would read as gigabytes owed
    if (close_after_write_) {
        linger();
        return;
    }
    if (streaming_) {
        pump_stream();
    } else {
        if (busy_) advance_rpc();                       // jobs the output bound held back may run now
        if (!busy_ && !request_open_) note_idle(true);  // all owed is written: idle until the next request
        parse();
        do_read();
    }
}

// --- time ------------------------------------------------------------------------------------

void http_connection::arm_timer() {
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) { self->on_timer(ec); });
}

void http_connection::on_timer(const asio::error_code& ec) {
    if (ec || stopped_) return;
    const auto now = std::chrono::steady_clock::now();
    const auto& cfg = services_.config;
    if (cfg.request_timeout > 0 && request_open_ && now - request_began_ >= seconds(cfg.request_timeout)) {
        request_open_ = false;
        fail(408,
             "request not finished within " + std::to_string(cfg.request_timeout) + " s (--request-timeout)");
    } else if (streaming_ && write_in_flight_ && now - last_activity_ >= stalled_stream &&
               (unsent() >= cfg.max_output_bytes || session_.watches->owes_resync())) {
        // A reader that stopped reading with --max-output-bytes owed, or so far behind that it
        // will be sent the whole state again, is dropped now, not after --idle-timeout: its
        // stream would only ever be coalesced and resynced again.
        spdlog::info("http {}: event stream reader stalled with {} bytes unsent, closing", session_.id,
                     unsent());
        close("slow reader");
        return;
    } else if (streaming_ && unsent() == 0 && now - last_activity_ >= heartbeat) {
        write(": keep-alive\n\n");  // a quiet stream stays open through proxies
    } else if (cfg.idle_timeout > 0 && now - last_activity_ >= seconds(cfg.idle_timeout) &&
               !(busy_ && !streaming_) && !(streaming_ && unsent() == 0)) {
        close(write_in_flight_ ? "slow reader" : "idle timeout");
        return;
    }
    arm_timer();
}

void http_connection::linger() {
    // Closing with unread input would send RST and could destroy the answer just written (a 413
    // for a body still arriving): send FIN, discard input until the client closes, for at most 0.5 s.
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    timer_.expires_after(std::chrono::milliseconds(500));
    timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (!ec) self->close("done");
    });
    auto buffer = std::make_shared<std::array<char, 4096>>();
    const auto discard = std::make_shared<std::function<void()>>();
    *discard = [self = shared_from_this(), buffer, weak = std::weak_ptr<std::function<void()>>(discard)] {
        self->socket_.async_read_some(asio::buffer(*buffer),
                                      [self, weak](const asio::error_code& ec, std::size_t) {
                                          if (self->stopped_) return;
                                          if (ec) {
                                              self->close("done");
                                          } else if (auto again = weak.lock()) {
                                              (*again)();
                                          }
                                      });
    };
    lingering_read_ = discard;
    (*discard)();
}

void http_connection::close(std::string_view why) {
    if (stopped_) return;
    stopped_ = true;
    note_idle(false);
    stalled_since_.store(0, std::memory_order_relaxed);
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    timer_.cancel();
    lingering_read_.reset();
    pipeline_.close();
    if (session_.watches) session_.watches->close();
    if (output_account_) services_.output.close(output_account_);
    services_.clients.remove(session_);
    spdlog::debug("http {}: from {}, closed ({})", session_.id, session_.peer, why);  // one line each
    owner_.remove(shared_from_this());
}

}  // namespace ecsd::net
