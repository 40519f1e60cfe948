#pragma once
// A stand-in for the Agones SDK sidecar's REST API (the real one cannot run here), for tests of
// ecsd --agones:
//
//   ecsd::test::agones_sidecar sidecar;                        // 127.0.0.1, a free port
//   ecsd::test::ecsd_server server({"--agones-port", std::to_string(sidecar.port())});
//   ASSERT_TRUE(sidecar.wait_for([&] { return sidecar.count("Ready") == 1; }, 5s));
//   EXPECT_TRUE(sidecar.violations().empty());
//
// It serves the paths, methods and bodies of the Agones repository's sdks/swagger/sdk.swagger.json
// and answers as the real sidecar (grpc-gateway in front of the SDK server) does:
//   - an unknown path: 404 {"code":5,"message":"Not Found"}; a known path with another method: 405;
//   - a body that is not JSON, not an object, or has a member of the wrong type: 400 (code 3);
//     an empty body is read as {} and members the message lacks are ignored, as the real one does;
//   - SetLabel and SetAnnotation check the key as a Kubernetes qualified name and (labels) the
//     value as a label value: 400 otherwise;
//   - anything else: 200 with {} (GetGameServer: a small GameServer).
// Stricter than the real one, it also notes as a violation whatever the description does not allow
// even where the real sidecar lets it pass: a Content-Type other than application/json, a missing
// body, members the message does not have, HTTP other than 1.1. Tests assert there are none.
// Every request is recorded in order, with what it was answered.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace ecsd::test {

/// @brief One request the stand-in received.
struct sidecar_call {
    std::string operation;  ///< the swagger's operationId (Ready, Health, SetLabel, ...), or "" if none
    std::string method;
    std::string path;
    nlohmann::json body;                       ///< the body as parsed (null when empty or not JSON)
    int status = 0;                            ///< what the stand-in answered (0: it did not, see hang())
    std::string rejection;                     ///< why it answered 4xx
    std::chrono::steady_clock::time_point at;  ///< when the request was complete
};

/// @brief The stand-in sidecar: one thread serving 127.0.0.1.
class agones_sidecar {
  public:
    /// @brief Listens on 127.0.0.1:port (0: a free port); throws std::runtime_error if it cannot.
    explicit agones_sidecar(int port = 0);
    agones_sidecar(const agones_sidecar&) = delete;
    agones_sidecar& operator=(const agones_sidecar&) = delete;
    ~agones_sidecar();

    /// @brief The port it listens on.
    [[nodiscard]] int port() const noexcept { return port_; }

    /// @brief Every request so far, in the order they arrived.
    [[nodiscard]] std::vector<sidecar_call> calls() const;
    /// @brief The operations answered 200, in order (e.g. Ready, SetLabel, Health, ..., Shutdown).
    [[nodiscard]] std::vector<std::string> operations() const;
    /// @brief How many requests of this operation were answered 200.
    [[nodiscard]] std::size_t count(std::string_view operation) const;
    /// @brief The labels as the sidecar would put them on the GameServer (without agones.dev/sdk-).
    [[nodiscard]] std::map<std::string, std::string> labels() const;
    /// @brief Requests the description does not allow (see the top of this file), one line each.
    [[nodiscard]] std::vector<std::string> violations() const;

    /// @brief Polls `done` every 10 ms until it is true or `timeout` passes; returns its last value.
    static bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds timeout);

    /// @brief Runs `hook` on the sidecar's thread when a request of `operation` is accepted, before it
    /// is answered (the caller is still waiting for the answer then).
    void on(const std::string& operation, std::function<void()> hook);
    /// @brief From now on answer every request with this status and a googlerpc Status body (0: answer
    /// normally again). Rejected requests are recorded as usual.
    void fail_with(int status);
    /// @brief From now on, take requests but never answer them (false: answer again).
    void hang(bool on);

    /// @brief Kubernetes' IsQualifiedName, as the sidecar checks label and annotation keys.
    [[nodiscard]] static bool is_qualified_name(std::string_view key);
    /// @brief Kubernetes' IsValidLabelValue.
    [[nodiscard]] static bool is_valid_label_value(std::string_view value);

  private:
    struct answer {
        int status = 200;
        std::string body = "{}";
    };
    void serve();
    void serve_connection(int fd);
    answer handle(sidecar_call& call, const std::map<std::string, std::string>& headers,
                  std::string_view body, std::vector<std::string>& violations);

    int listen_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<int> fail_status_{0};
    std::atomic<bool> hang_{false};
    mutable std::mutex mutex_;
    std::vector<sidecar_call> calls_;
    std::vector<std::string> violations_;
    std::map<std::string, std::string> labels_;
    std::map<std::string, std::function<void()>> hooks_;
    std::vector<int> held_;  ///< connections taken while hanging, closed at destruction
    std::thread thread_;
};

}  // namespace ecsd::test
