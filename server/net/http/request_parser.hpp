#pragma once
// The request side of the HTTP face, without sockets: Debian's http-parser (libhttp-parser-dev)
// driven over bytes, collecting what http_connection routes on (method, URL, the Host, Origin,
// Content-Type and Authorization headers, body) and enforcing the limits that answer before the
// request is complete: 16 KiB of request line and headers (431) and the body limit (413). One
// message at a time: the parser pauses after each message's headers (so the caller can refuse it
// before its body is read) and after each complete message, so pipelined requests wait in the
// caller's buffer. Fuzzed by tests/fuzz/http_request_fuzz.cpp.
#include <http_parser.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ecsd::net {

/// @brief Parses HTTP/1.1 requests from a byte stream, one message per complete().
class request_parser {
  public:
    /// @brief Most bytes of request line and headers a request may have (431 past it).
    static constexpr std::size_t max_header_bytes = std::size_t{16} * 1024;

    /// @brief What one execute() did.
    struct step {
        std::size_t consumed = 0;  ///< bytes of the input parsed (drop them from the buffer unless error)
        bool began = false;        ///< a message began
        bool head = false;      ///< its headers are complete: method(), url(), ... and body_length() describe
                                ///< it, body() is still empty; the next execute() goes on with the body
        bool complete = false;  ///< a message is complete: method(), url(), ... describe it
        int error = 0;          ///< nonzero: answer this HTTP status (400, 413, 431), then close
        std::string why;        ///< the reason for an error
    };

    /// @param max_body_bytes the largest body accepted (413 past it)
    explicit request_parser(std::size_t max_body_bytes);
    request_parser(const request_parser&) = delete;
    request_parser& operator=(const request_parser&) = delete;

    /// @brief Parses from `bytes` until a message's headers or the message complete, the bytes run
    /// out, or an error. After an error the parser is unusable (the connection closes).
    step execute(std::string_view bytes);

    // The last message (valid after a step with head or complete set, until the next message begins).
    [[nodiscard]] http_method method() const noexcept { return static_cast<http_method>(parser_.method); }
    [[nodiscard]] const std::string& url() const noexcept { return url_; }
    [[nodiscard]] const std::string& authorization() const noexcept { return authorization_; }
    /// @brief The Host header; empty when there was none.
    [[nodiscard]] const std::string& host() const noexcept { return host_; }
    /// @brief The Origin header, when there was one.
    [[nodiscard]] const std::optional<std::string>& origin() const noexcept { return origin_; }
    /// @brief The Content-Type header as sent; empty when there was none.
    [[nodiscard]] const std::string& content_type() const noexcept { return content_type_; }
    /// @brief The body's length as the headers declare it; nullopt when they do not tell (chunked).
    [[nodiscard]] std::optional<std::uint64_t> body_length() const noexcept { return body_length_; }
    [[nodiscard]] const std::string& body() const noexcept { return body_; }
    /// @brief Whether the connection stays open after this message (HTTP version and Connection).
    [[nodiscard]] bool keep_alive() const noexcept { return keep_alive_; }
    /// @brief The headers of a WebSocket upgrade (RFC 6455, 4.2.1); empty when absent. Connection
    /// may come in several headers: they are joined with ", ".
    [[nodiscard]] const std::string& upgrade() const noexcept { return upgrade_; }
    [[nodiscard]] const std::string& connection() const noexcept { return connection_; }
    [[nodiscard]] const std::string& websocket_key() const noexcept { return ws_key_; }
    [[nodiscard]] const std::string& websocket_version() const noexcept { return ws_version_; }

  private:
    int count_head(std::size_t n);  // request line + headers so far; past max_header_bytes: 431
    int end_header();               // the header in field_ / value_ is complete
    static int on_message_begin(http_parser* p);
    static int on_url(http_parser* p, const char* at, std::size_t n);
    static int on_header_field(http_parser* p, const char* at, std::size_t n);
    static int on_header_value(http_parser* p, const char* at, std::size_t n);
    static int on_headers_complete(http_parser* p);
    static int on_body(http_parser* p, const char* at, std::size_t n);
    static int on_message_complete(http_parser* p);

    std::size_t max_body_bytes_;
    http_parser parser_{};
    http_parser_settings settings_{};
    std::size_t header_bytes_ = 0;
    std::string url_;
    std::string field_;  // header being read
    std::string value_;
    bool in_value_ = false;
    std::string authorization_;
    std::string host_;
    std::optional<std::string> origin_;
    std::string content_type_;
    std::string upgrade_;
    std::string connection_;
    std::string ws_key_;
    std::string ws_version_;
    std::optional<std::uint64_t> body_length_;
    std::string body_;
    bool keep_alive_ = true;
    bool began_ = false;
    bool head_done_ = false;
    bool message_done_ = false;
    int refuse_ = 0;  // set by a callback: answer this status, then close
    std::string refuse_why_;
};

}  // namespace ecsd::net
