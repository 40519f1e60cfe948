// ecsd: parse the settings, set up logging, serve until SIGINT/SIGTERM.
#include <exception>
#include <variant>

#include <spdlog/spdlog.h>

#include "config.hpp"
#include "logging.hpp"
#include "server.hpp"

int main(int argc, char** argv) {
    try {
        auto parsed = ecsd::net::parse_command_line(argc, argv);
        if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
        auto& config = std::get<ecsd::net::server_config>(parsed);
        ecsd::net::setup_logging(config.log_level);
        ecsd::net::server server(std::move(config));
        server.run();
    } catch (const std::exception& e) {
        spdlog::critical("ecsd: {}", e.what());
        return 1;
    }
    return 0;
}
