#pragma once
// What a dispatcher needs, without sockets or threads: a method table the test fills, a directory
// the test adds hosts to (world-less in the unit tests; request_bench adds a real world), and an
// authenticated caller.
#include <asio.hpp>

#include "hosting/world_directory.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/method_table.hpp"
#include "rpc/services.hpp"
#include "rpc/session.hpp"

namespace ecsd::net::test {

struct rpc_harness {
    asio::io_context io_;
    server_config config_;
    method_table table_;
    world_directory worlds_{io_, 8};
    server_services services_{config_, table_, worlds_};
    dispatcher dispatch_{services_};
    session session_ = authenticated();

    /// @brief Connection 1 from "test", authenticated (an admin: no token is set).
    static session authenticated() {
        session s;
        s.id = 1;
        s.peer = "test";
        s.authenticated = true;
        return s;
    }
};

}  // namespace ecsd::net::test
