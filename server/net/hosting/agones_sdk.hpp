#pragma once
// The Agones SDK client: ecsd as an Agones GameServer (docs/scaling.md). It speaks the SDK's REST
// API (sdks/swagger/sdk.swagger.json of the Agones repository: HTTP/1.1, JSON bodies) to the
// sidecar on localhost, on the server's io_context, one short connection a call:
//   - POST /ready once the server listens and its worlds are loaded (retried with backoff);
//   - POST /health every health period while every world's tick loop is alive;
//   - PUT /metadata/label {"key","value"} for ecsd-worlds and ecsd-connections when they change;
//   - POST /shutdown after the final save (shutdown(), once the io_context has stopped).
// A sidecar that is absent, slow or failing costs a warning and a retry, never a stall: no tick
// and no request waits for it.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <asio.hpp>

namespace ecsd::net {

class world_directory;

namespace agones {

/// @brief What the sidecar's SetLabel accepts as a value (Kubernetes label values): empty, or at most
/// 63 characters of [A-Za-z0-9._-] that begin and end with a letter or digit.
[[nodiscard]] bool is_valid_label_value(std::string_view value) noexcept;

/// @brief The text of one HTTP/1.1 request to the sidecar with a JSON body ("Connection: close").
[[nodiscard]] std::string make_request(std::string_view method, std::string_view path, std::string_view body,
                                       std::uint16_t port);

/// @brief The status code of an HTTP/1.x response's status line, or 0 when it is not one.
[[nodiscard]] int response_status(std::string_view response) noexcept;

/// @brief How long the tick loop of a world may go without a wake-up before the world counts as
/// stuck: twice the health period, and never under 2 s (a 1 Hz world wakes once a second).
[[nodiscard]] std::chrono::steady_clock::duration stall_limit(
    std::chrono::steady_clock::duration health_period);

}  // namespace agones

/// @brief Reports this server to the Agones sidecar. All its work runs on its own strand.
class agones_sdk {
  public:
    /// @brief Tuning; the defaults are ecsd's.
    struct settings {
        std::uint16_t port = 9358;  ///< the sidecar's HTTP port on localhost
        std::chrono::steady_clock::duration health_period = std::chrono::seconds(2);
    };

    /// @brief Reports the worlds of `worlds` and the count in `connections_open`; both outlive it.
    agones_sdk(asio::io_context& io, world_directory& worlds,
               const std::atomic<std::size_t>& connections_open, settings s);
    agones_sdk(const agones_sdk&) = delete;
    agones_sdk& operator=(const agones_sdk&) = delete;
    ~agones_sdk();

    /// @brief Sends Ready and starts the health and label loops. Call once the server listens and
    /// its worlds are loaded; the calls go out when the io_context runs. Safe from any thread.
    void start();
    /// @brief Stops every loop and abandons calls in flight (server shutdown), so the io_context can
    /// run out of work. Safe from any thread.
    void stop();

    /// @brief Sends Shutdown and waits for its answer, at most `timeout`; on a private io_context, for
    /// after the server's has stopped and every world is saved. True when the sidecar answered 2xx.
    static bool shutdown(std::uint16_t port, std::chrono::milliseconds timeout);

  private:
    class call;
    using call_done = std::function<void(int status, const std::string& error)>;

    void send(std::string_view method, std::string_view path, std::string_view body, call_done done);
    void send_ready();
    void arm_health();
    void on_health();
    void arm_labels(std::chrono::steady_clock::duration after);
    void on_labels();
    void note_failure(std::string_view what, int status, const std::string& error);
    void note_success();

    asio::strand<asio::io_context::executor_type> strand_;
    world_directory& worlds_;
    const std::atomic<std::size_t>& connections_open_;
    settings settings_;
    asio::steady_timer ready_timer_;
    asio::steady_timer health_timer_;
    asio::steady_timer label_timer_;
    std::vector<std::shared_ptr<call>> in_flight_;
    bool stopped_ = false;
    std::chrono::steady_clock::duration ready_backoff_;
    bool health_in_flight_ = false;
    bool stuck_reported_ = false;  ///< a stuck world was logged; cleared when all are alive again
    struct label {
        std::string key;
        std::string sent;  ///< the value the sidecar accepted last ("" before the first)
        bool in_flight = false;
    };
    std::vector<label> labels_;
    std::chrono::steady_clock::duration label_backoff_;
    bool sidecar_down_ = false;  ///< a call failed; logged once until one succeeds again
};

}  // namespace ecsd::net
