// ecsd: parse the settings, set up logging, serve until SIGINT/SIGTERM.
#include <pthread.h>

#include <csignal>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>
#include <variant>

#include <spdlog/spdlog.h>

#include "config.hpp"
#include "logging.hpp"
#include "rpc/identities.hpp"
#include "server.hpp"

namespace {

/// @brief SIGINT, SIGTERM and SIGHUP, blocked in every thread (they inherit the mask from main,
/// which blocks them before it starts any) and taken by one thread with sigwait.
///
/// Why not a handler (asio::signal_set): a handler runs in whichever thread the kernel picks and
/// must reach the io_context through a self-pipe. Under ThreadSanitizer, which defers handlers to
/// its own safe points, a SIGTERM was twice never acted on and the daemon hung. A thread that
/// waits for the signal synchronously has no such window, and calls only server::stop(), which is
/// safe from any thread. The forked saver unblocks them again (forked_save.cpp).
sigset_t stop_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    return set;
}

// The server the signal thread stops: null once main is done with it (the thread outlives it).
std::mutex serving_mutex;
ecsd::net::server* serving = nullptr;

[[noreturn]] void wait_for_signals() {
    const sigset_t set = stop_signals();
    for (;;) {
        int signo = 0;
        if (sigwait(&set, &signo) != 0) continue;
        if (signo == SIGHUP) {
            // A terminal that closes, or a careless `kill -HUP`, must not stop the worlds unsaved:
            // SIGHUP reloads the --tokens file, and is otherwise only noted (ecsd logs to stderr and
            // holds no file to reopen).
            const std::lock_guard lock(serving_mutex);
            if (serving == nullptr || !serving->reload_tokens())
                spdlog::warn("SIGHUP: ignored (no --tokens file to reload); ecsd keeps running");
            continue;
        }
        spdlog::info("signal {}: stop accepting, finishing requests in flight", signo);
        const std::lock_guard lock(serving_mutex);
        if (serving != nullptr) serving->stop();  // a second signal finds the stop under way
    }
}

}  // namespace

int main(int argc, char** argv) {
    const sigset_t set = stop_signals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    try {
        auto parsed = ecsd::net::parse_command_line(argc, argv);
        if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
        auto& config = std::get<ecsd::net::server_config>(parsed);
        if (!config.hash_token.empty()) {
            std::string token = config.hash_token;
            if (token == "-" && !std::getline(std::cin, token)) token.clear();
            if (token.empty()) {
                std::cerr << "ecsd --hash-token: the token is empty\n";
                return 2;
            }
            std::cout << ecsd::net::sha256_hex(token) << "\n";
            return 0;
        }
        ecsd::net::setup_logging(config.log_level);
        ecsd::net::server server(std::move(config));
        {
            const std::lock_guard lock(serving_mutex);
            serving = &server;
        }
        // Detached: it waits in sigwait for as long as the process lives, and exit ends it.
        std::thread(wait_for_signals).detach();
        server.run();
        const std::lock_guard lock(serving_mutex);
        serving = nullptr;
    } catch (const std::exception& e) {
        spdlog::critical("ecsd: {}", e.what());
        return 1;
    }
    return 0;
}
