#pragma once

#include <stdexcept>
#include <string>

#include "json.hpp"

namespace ecsd::cli {

/// @brief Process exit codes of ecsctl; scripts may rely on them.
enum class exit_code : int {
    ok = 0,            ///< the call succeeded
    server_error = 1,  ///< the server answered with a JSON-RPC error, or an `expect` did not hold
    usage = 2,         ///< the command line (or script line) was wrong; nothing was sent
    connection = 3,    ///< the server could not be reached, closed the connection or timed out
};

/// @brief A mistake in the command line or a script line; maps to exit code 2.
class usage_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// @brief An `expect`/`assert` line that did not hold; exit code 1, like a refusal from the server.
class expectation_failed : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// @brief The server could not be reached, hung up, answered garbage or took too long; exit code 3.
class connection_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// @brief A JSON-RPC error response from the server; exit code 1.
class server_error : public std::runtime_error {
  public:
    /// @brief Builds the error from the `error` member of a response.
    explicit server_error(const json& error);

    /// @brief The JSON-RPC error code (-32602 and so on).
    [[nodiscard]] long long code() const noexcept { return code_; }
    /// @brief `error.data.reason`, or a name derived from the code when the server sent none.
    [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
    /// @brief `error.message`.
    [[nodiscard]] const std::string& message() const noexcept { return message_; }
    /// @brief The whole `error` object as received.
    [[nodiscard]] const json& error() const noexcept { return error_; }

  private:
    long long code_ = 0;
    std::string reason_;
    std::string message_;
    json error_;
};

}  // namespace ecsd::cli
