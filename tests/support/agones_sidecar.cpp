#include "agones_sidecar.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <optional>
#include <stdexcept>

namespace ecsd::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

/// The body type of each operation, as the swagger's definitions name them.
enum class message { none, empty, key_value, duration };

struct route {
    std::string_view path;
    std::string_view method;
    std::string_view operation;
    message body;
};

/// The paths of sdks/swagger/sdk.swagger.json (Agones' stable SDK), with the method each allows.
constexpr route routes[] = {
    {"/allocate", "POST", "Allocate", message::empty},
    {"/gameserver", "GET", "GetGameServer", message::none},
    {"/health", "POST", "Health", message::empty},
    {"/metadata/annotation", "PUT", "SetAnnotation", message::key_value},
    {"/metadata/label", "PUT", "SetLabel", message::key_value},
    {"/ready", "POST", "Ready", message::empty},
    {"/reserve", "POST", "Reserve", message::duration},
    {"/shutdown", "POST", "Shutdown", message::empty},
    {"/watch/gameserver", "GET", "WatchGameServer", message::none},
};

std::string rpc_status(int code, std::string_view message) {
    return json{{"code", code}, {"message", message}, {"details", json::array()}}.dump();
}

bool is_alnum(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

/// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63 characters, not empty.
bool is_label_name(std::string_view s) {
    if (s.empty() || s.size() > 63 || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
    return std::ranges::all_of(s, [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

/// A DNS-1123 subdomain: lower-case labels of [a-z0-9-] joined by dots, at most 253 characters.
bool is_dns_subdomain(std::string_view s) {
    if (s.empty() || s.size() > 253) return false;
    const auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
    return std::ranges::all_of(s, [&](char c) { return lower_alnum(c) || c == '-' || c == '.'; });
}

std::string lower(std::string s) {
    std::ranges::transform(s, s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s);
}

/// Reads from fd into buf until `ready(buf)` or the deadline; false on timeout, EOF or error.
template <class Ready>
bool read_until(int fd, std::string& buf, std::chrono::steady_clock::time_point deadline, Ready ready) {
    while (!ready(buf)) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left <= 0ms) return false;
        pollfd p{fd, POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        char chunk[4096];
        const auto n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) return false;
        buf.append(chunk, static_cast<std::size_t>(n));
        if (buf.size() > 1024 * 1024) return false;
    }
    return true;
}

void send_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

std::string_view reason_phrase(int status) {
    switch (status) {
        case 200:
            return "OK";
        case 400:
            return "Bad Request";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 500:
            return "Internal Server Error";
        case 501:
            return "Not Implemented";
        case 503:
            return "Service Unavailable";
        default:
            return "Status";
    }
}

}  // namespace

agones_sidecar::agones_sidecar(int port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw std::runtime_error("agones_sidecar: socket failed");
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 64) != 0) {
        ::close(listen_fd_);
        throw std::runtime_error("agones_sidecar: cannot listen on 127.0.0.1:" + std::to_string(port));
    }
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
}

agones_sidecar::~agones_sidecar() {
    stopping_ = true;
    thread_.join();
    ::close(listen_fd_);
    for (const int fd : held_) ::close(fd);
}

std::vector<sidecar_call> agones_sidecar::calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
}

std::vector<std::string> agones_sidecar::operations() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& c : calls_)
        if (c.status == 200) out.push_back(c.operation);
    return out;
}

std::size_t agones_sidecar::count(std::string_view operation) const {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(std::ranges::count_if(
        calls_, [&](const auto& c) { return c.status == 200 && c.operation == operation; }));
}

std::map<std::string, std::string> agones_sidecar::labels() const {
    std::lock_guard lock(mutex_);
    return labels_;
}

std::vector<std::string> agones_sidecar::violations() const {
    std::lock_guard lock(mutex_);
    return violations_;
}

bool agones_sidecar::wait_for(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline) return done();
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

void agones_sidecar::on(const std::string& operation, std::function<void()> hook) {
    std::lock_guard lock(mutex_);
    hooks_[operation] = std::move(hook);
}

void agones_sidecar::fail_with(int status) {
    fail_status_ = status;
}

void agones_sidecar::hang(bool on) {
    hang_ = on;
}

bool agones_sidecar::is_qualified_name(std::string_view key) {
    // [prefix/]name: the prefix a DNS subdomain, the name a label name.
    const auto slash = key.find('/');
    if (slash == std::string_view::npos) return is_label_name(key);
    const auto name = key.substr(slash + 1);
    return name.find('/') == std::string_view::npos && is_dns_subdomain(key.substr(0, slash)) &&
           is_label_name(name);
}

bool agones_sidecar::is_valid_label_value(std::string_view value) {
    return value.empty() || is_label_name(value);
}

void agones_sidecar::serve() {
    while (!stopping_) {
        pollfd p{listen_fd_, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) continue;
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        serve_connection(fd);
    }
}

void agones_sidecar::serve_connection(int fd) {
    std::string buf;
    for (;;) {
        // One request: the head, then Content-Length bytes of body. The real sidecar keeps a
        // connection open unless told otherwise; so does this one, for 1 s of silence.
        const auto deadline = std::chrono::steady_clock::now() + 1s;
        if (!read_until(fd, buf, deadline,
                        [](const std::string& b) { return b.find("\r\n\r\n") != std::string::npos; }))
            break;
        const auto head_end = buf.find("\r\n\r\n");
        const std::string head = buf.substr(0, head_end);
        buf.erase(0, head_end + 4);

        sidecar_call call;
        std::vector<std::string> violations;
        std::map<std::string, std::string> headers;
        std::size_t line_end = head.find("\r\n");
        const std::string request_line = head.substr(0, line_end);
        std::string version;
        {
            const auto sp1 = request_line.find(' ');
            const auto sp2 = request_line.find(' ', sp1 == std::string::npos ? sp1 : sp1 + 1);
            if (sp1 == std::string::npos || sp2 == std::string::npos) {
                send_all(fd, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
                break;
            }
            call.method = request_line.substr(0, sp1);
            call.path = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
            version = request_line.substr(sp2 + 1);
        }
        while (line_end != std::string::npos) {
            const auto start = line_end + 2;
            line_end = head.find("\r\n", start);
            const auto line =
                head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
            const auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            headers[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
        }
        if (version != "HTTP/1.1")
            violations.push_back(call.method + " " + call.path + ": " + version + ", not HTTP/1.1");
        std::size_t length = 0;
        if (headers.contains("transfer-encoding")) {
            violations.push_back(call.method + " " + call.path +
                                 ": a chunked body (the stand-in reads Content-Length only)");
        } else if (headers.contains("content-length")) {
            length = std::stoul(headers["content-length"]);
        }
        if (!read_until(fd, buf, std::chrono::steady_clock::now() + 2s,
                        [length](const std::string& b) { return b.size() >= length; }))
            break;
        const std::string body = buf.substr(0, length);
        buf.erase(0, length);
        call.at = std::chrono::steady_clock::now();

        answer a;
        if (!headers.contains("host")) {
            a = {400, "missing required Host header"};  // Go's net/http, before any handler
            call.rejection = a.body;
        } else {
            a = handle(call, headers, body, violations);
        }
        std::function<void()> hook;
        {
            std::lock_guard lock(mutex_);
            if (a.status == 200 && hooks_.contains(call.operation)) hook = hooks_[call.operation];
        }
        if (hook) hook();
        if (const int failing = fail_status_.load(); failing != 0 && a.status == 200) {
            a = {failing, rpc_status(14, "stand-in told to fail")};
            call.rejection = "told to fail";
        }
        const bool hanging = hang_.load();
        call.status = hanging ? 0 : a.status;
        {
            std::lock_guard lock(mutex_);
            calls_.push_back(call);
            for (auto& v : violations) violations_.push_back(std::move(v));
            if (call.status == 200 && call.operation == "SetLabel")
                labels_[call.body.value("key", "")] = call.body.value("value", "");
        }
        if (hanging) {
            std::lock_guard lock(mutex_);
            held_.push_back(fd);
            return;
        }
        const bool close = lower(headers["connection"]) == "close" || version != "HTTP/1.1";
        std::string response =
            "HTTP/1.1 " + std::to_string(a.status) + " " + std::string(reason_phrase(a.status)) +
            "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(a.body.size()) + "\r\n";
        if (close) response += "Connection: close\r\n";
        response += "\r\n" + a.body;
        send_all(fd, response);
        if (close) break;
    }
    ::close(fd);
}

agones_sidecar::answer agones_sidecar::handle(sidecar_call& call,
                                              const std::map<std::string, std::string>& headers,
                                              std::string_view body, std::vector<std::string>& violations) {
    const auto where = call.method + " " + call.path;
    const auto reject = [&](int status, int code, const std::string& why) {
        call.rejection = why;
        return answer{status, rpc_status(code, why)};
    };
    // grpc-gateway routes on the path alone (a query string is for parameters).
    const auto path = call.path.substr(0, call.path.find('?'));
    const route* found = nullptr;
    bool path_known = false;
    for (const auto& r : routes) {
        if (r.path != path) continue;
        path_known = true;
        if (r.method == call.method) found = &r;
    }
    if (!path_known) return reject(404, 5, "Not Found");
    if (!found) return reject(405, 12, "Method Not Allowed");
    call.operation = std::string(found->operation);
    if (found->body == message::none) {
        if (call.operation == "WatchGameServer") return reject(501, 12, "the stand-in does not stream");
        std::lock_guard lock(mutex_);
        return {200, json{{"object_meta", {{"name", "stand-in"}, {"labels", labels_}}},
                          {"status", {{"state", "Ready"}}}}
                         .dump()};
    }

    // The body: the swagger's `consumes` is application/json and every body parameter is required.
    const auto type = headers.find("content-type");
    if (type == headers.end() || !type->second.starts_with("application/json"))
        violations.push_back(where + ": Content-Type " + (type == headers.end() ? "absent" : type->second) +
                             ", not application/json");
    if (body.empty()) {
        violations.push_back(where + ": no body (the description requires one; the real sidecar reads {})");
        call.body = json::object();
    } else {
        try {
            call.body = json::parse(body);
        } catch (const json::parse_error& e) {
            return reject(400, 3, std::string("body is not JSON: ") + e.what());
        }
        if (!call.body.is_object()) return reject(400, 3, "body is not a JSON object");
    }

    // Members and their types, as protojson reads them (unknown members are dropped: noted).
    const auto string_member = [&](const char* name) -> std::optional<answer> {
        if (call.body.contains(name) && !call.body[name].is_string() && !call.body[name].is_null())
            return reject(400, 3, std::string(name) + " is not a string");
        return std::nullopt;
    };
    std::vector<std::string> allowed;
    if (found->body == message::key_value) {
        allowed = {"key", "value"};
        for (const char* m : {"key", "value"})
            if (auto bad = string_member(m)) return *bad;
    } else if (found->body == message::duration) {
        allowed = {"seconds"};
        if (call.body.contains("seconds")) {
            const auto& s = call.body["seconds"];
            const bool digits =
                s.is_string() && !s.get<std::string>().empty() &&
                std::ranges::all_of(s.get<std::string>(), [](char c) { return c >= '0' && c <= '9'; });
            if (!s.is_number_integer() && !digits) return reject(400, 3, "seconds is not an int64");
        }
    }
    for (const auto& [name, value] : call.body.items()) {
        if (std::ranges::find(allowed, name) == allowed.end())
            violations.push_back(where + ": member '" + name + "' is not in the message");
    }

    if (call.operation == "SetLabel" || call.operation == "SetAnnotation") {
        const auto key = call.body.value("key", "");
        const auto value = call.body.value("value", "");
        if (!is_qualified_name(key)) return reject(400, 3, "invalid key '" + key + "'");
        if (call.operation == "SetLabel" && !is_valid_label_value(value))
            return reject(400, 3, "invalid label value '" + value + "' for key '" + key + "'");
    }
    return {};
}

}  // namespace ecsd::test
