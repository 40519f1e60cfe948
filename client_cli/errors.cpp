#include "errors.hpp"

#include "ecsd/protocol/errors.hpp"

namespace ecsd::cli {

namespace {

/// @brief The reason a code stands for in the protocol's table, for answers without data.reason.
std::string reason_for_code(long long code) {
    for (const auto& row : ecsd::protocol::all_reasons()) {
        if (row.code == code) {
            return std::string(row.name);
        }
    }
    return "error";
}

std::string text_of(const json& error) {
    if (error.is_object()) {
        const auto it = error.find("message");
        if (it != error.end() && it->is_string()) {
            return it->get<std::string>();
        }
    }
    return error.dump();
}

}  // namespace

server_error::server_error(const json& error) : std::runtime_error(text_of(error)), error_(error) {
    message_ = text_of(error);
    if (!error.is_object()) {
        reason_ = "error";
        return;
    }
    if (const auto it = error.find("code"); it != error.end() && it->is_number_integer()) {
        code_ = it->get<long long>();
    }
    const auto data = error.find("data");
    if (data != error.end() && data->is_object()) {
        const auto reason = data->find("reason");
        if (reason != data->end() && reason->is_string()) {
            reason_ = reason->get<std::string>();
        }
    }
    if (reason_.empty()) {
        reason_ = reason_for_code(code_);
    }
}

}  // namespace ecsd::cli
