#include "http/request_parser.hpp"

#include <cctype>

namespace ecsd::net {
namespace {

request_parser& self_of(http_parser* p) {
    return *static_cast<request_parser*>(p->data);
}

constexpr std::size_t kept_body_bytes = std::size_t{128} << 10;

}  // namespace

request_parser::request_parser(std::size_t max_body_bytes) : max_body_bytes_(max_body_bytes) {
    http_parser_init(&parser_, HTTP_REQUEST);
    parser_.data = this;
    http_parser_settings_init(&settings_);
    settings_.on_message_begin = &request_parser::on_message_begin;
    settings_.on_url = &request_parser::on_url;
    settings_.on_header_field = &request_parser::on_header_field;
    settings_.on_header_value = &request_parser::on_header_value;
    settings_.on_headers_complete = &request_parser::on_headers_complete;
    settings_.on_body = &request_parser::on_body;
    settings_.on_message_complete = &request_parser::on_message_complete;
}

request_parser::step request_parser::execute(std::string_view bytes) {
    step out;
    began_ = false;
    head_done_ = false;
    message_done_ = false;
    out.consumed = http_parser_execute(&parser_, &settings_, bytes.data(), bytes.size());
    const auto err = HTTP_PARSER_ERRNO(&parser_);
    out.began = began_;
    if (refuse_ != 0) {
        out.error = refuse_;
        out.why = refuse_why_;
        return out;
    }
    if (err != HPE_OK && err != HPE_PAUSED) {
        out.error = 400;
        out.why = std::string("malformed HTTP request: ") + http_errno_description(err);
        return out;
    }
    if (err == HPE_PAUSED) http_parser_pause(&parser_, 0);
    out.head = head_done_;
    out.complete = message_done_;
    return out;
}

// --- parser callbacks ------------------------------------------------------------------------

int request_parser::on_message_begin(http_parser* p) {
    auto& c = self_of(p);
    c.url_.clear();
    c.field_.clear();
    c.value_.clear();
    c.in_value_ = false;
    c.authorization_.clear();
    c.host_.clear();
    c.origin_.reset();
    c.content_type_.clear();
    c.upgrade_.clear();
    c.connection_.clear();
    c.ws_key_.clear();
    c.ws_version_.clear();
    c.body_length_ = 0;
    // A body grown for one large POST is given back, not kept for the connection's life (as the
    // framers do theirs, protocol/read_space.hpp).
    if (c.body_.capacity() > kept_body_bytes) {
        std::string().swap(c.body_);
    } else {
        c.body_.clear();
    }
    c.header_bytes_ = 0;
    c.began_ = true;
    return 0;
}

int request_parser::count_head(std::size_t n) {
    header_bytes_ += n;
    if (header_bytes_ <= max_header_bytes) return 0;
    refuse_ = 431;
    refuse_why_ = "request line and headers over " + std::to_string(max_header_bytes) + " bytes";
    return 1;  // stops the parser
}

int request_parser::on_url(http_parser* p, const char* at, std::size_t n) {
    auto& c = self_of(p);
    c.url_.append(at, n);
    return c.count_head(n);
}

int request_parser::on_header_field(http_parser* p, const char* at, std::size_t n) {
    auto& c = self_of(p);
    if (c.in_value_) {  // the previous header is complete
        if (const int stop = c.end_header(); stop != 0) return stop;
        c.field_.clear();
        c.value_.clear();
        c.in_value_ = false;
    }
    for (std::size_t i = 0; i < n; ++i)
        c.field_ += static_cast<char>(std::tolower(static_cast<unsigned char>(at[i])));
    return c.count_head(n);
}

int request_parser::end_header() {
    std::string* into = nullptr;
    bool seen = false;
    if (field_ == "authorization") {
        into = &authorization_;
        seen = !authorization_.empty();
    } else if (field_ == "host") {
        into = &host_;
        seen = !host_.empty();
    } else if (field_ == "content-type") {
        into = &content_type_;
        seen = !content_type_.empty();
    } else if (field_ == "origin") {
        seen = origin_.has_value();
        if (!seen) into = &origin_.emplace();
    } else if (field_ == "upgrade") {
        into = &upgrade_;
        seen = !upgrade_.empty();
    } else if (field_ == "sec-websocket-key") {
        into = &ws_key_;
        seen = !ws_key_.empty();
    } else if (field_ == "sec-websocket-version") {
        into = &ws_version_;
        seen = !ws_version_.empty();
    } else if (field_ == "connection") {
        // A list header: several are one list (RFC 9110, 5.3).
        if (!connection_.empty()) connection_ += ", ";
        connection_ += value_;
        return 0;
    } else {
        return 0;
    }
    // Two of these could be read one way here and another by a proxy in front: refused.
    if (seen) {
        refuse_ = 400;
        refuse_why_ = "more than one " + field_ + " header";
        return 1;
    }
    *into = value_;
    // Optional whitespace around a value is not part of it (RFC 9110, 5.5).
    while (!into->empty() && (into->back() == ' ' || into->back() == '\t')) into->pop_back();
    return 0;
}

int request_parser::on_header_value(http_parser* p, const char* at, std::size_t n) {
    auto& c = self_of(p);
    c.in_value_ = true;
    c.value_.append(at, n);
    return c.count_head(n);
}

int request_parser::on_headers_complete(http_parser* p) {
    auto& c = self_of(p);
    if (c.in_value_ && c.end_header() != 0) return -1;
    const auto limit = c.max_body_bytes_;
    if ((p->flags & F_CONTENTLENGTH) != 0 && p->content_length > limit) {
        c.refuse_ = 413;
        c.refuse_why_ = "body over " + std::to_string(limit) + " bytes (--max-line-bytes)";
        return -1;
    }
    if ((p->flags & F_CHUNKED) != 0) {
        c.body_length_.reset();
    } else if ((p->flags & F_CONTENTLENGTH) != 0) {
        c.body_length_ = p->content_length;
    }
    // The caller sees the head before any of the body is read. Pausing here leaves the headers'
    // last byte unparsed; the next execute() begins with it (http-parser's documented way).
    c.head_done_ = true;
    http_parser_pause(p, 1);
    return 0;
}

int request_parser::on_body(http_parser* p, const char* at, std::size_t n) {
    auto& c = self_of(p);
    c.body_.append(at, n);
    if (c.body_.size() > c.max_body_bytes_) {
        c.refuse_ = 413;
        c.refuse_why_ = "body over " + std::to_string(c.max_body_bytes_) + " bytes (--max-line-bytes)";
        return 1;
    }
    return 0;
}

int request_parser::on_message_complete(http_parser* p) {
    auto& c = self_of(p);
    c.message_done_ = true;
    c.keep_alive_ = http_should_keep_alive(p) != 0;
    http_parser_pause(p, 1);  // one request at a time: the rest waits in the caller's buffer
    return 0;
}

}  // namespace ecsd::net
