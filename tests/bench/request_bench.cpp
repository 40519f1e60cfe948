// Reading a request line (issue 14): nlohmann's parser, the reference, against protocol::parse_json
// (simdjson reading, the same nlohmann tree built), and the whole of protocol::parse_line, for the
// lines ecsd_load's presets send and for a journal record. Then dispatch/*: a request's whole trip
// through the pipeline on one thread, without sockets (parse_line, dispatcher::prepare, the world
// job run, the response line), for ecsd_load's ping, get and query presets against a world like
// the one ecsd_load makes: what a request costs in user space, which server CPU per request from
// ecsd_load measures with the kernel's share and far more noise. Run by hand from a Release build:
//   build/release/bin/request_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   build/release/bin/request_bench --benchmark_filter=dispatch --benchmark_repetitions=5
#include <memory>
#include <stdexcept>
#include <string>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "../unit/net/rpc_harness.hpp"
#include "ecsd/protocol/json_parse.hpp"
#include "ecsd/protocol/jsonrpc.hpp"
#include "hosting/hosted_world.hpp"
#include "methods/methods.hpp"
#include "world/components.hpp"
#include "world/world.hpp"

namespace {

const char* const get_line =
    R"({"jsonrpc":"2.0","id":12345,"method":"world.get_components","params":{"world":"default","entity":4294967296}})";
const char* const mutate_line =
    R"({"jsonrpc":"2.0","id":12345,"method":"world.mutate_components","params":{"world":"default","entity":4294967296,"component":"Position","path":"x","value":12.5}})";
const char* const query_line =
    R"({"jsonrpc":"2.0","id":7,"method":"world.query","params":{"world":"default","query":{"all":["Position","Velocity","Health"]},"limit":100}})";
const char* const journal_record =
    R"({"seq":1234567,"tick":8123,"method":"world.mutate_components","params":{"entity":4294967296,"component":"Position","path":"x","value":12.5,"world":"default"}})";

const char* line_of(std::int64_t which) {
    switch (which) {
        case 0:
            return get_line;
        case 1:
            return mutate_line;
        case 2:
            return query_line;
        default:
            return journal_record;
    }
}

void label(benchmark::State& state) {
    static const char* const names[] = {"get", "mutate", "query", "journal_record"};
    state.SetLabel(names[state.range(0)]);
}

void nlohmann_parse(benchmark::State& state) {
    const std::string line = line_of(state.range(0));
    for (auto _ : state) {
        auto v = nlohmann::json::parse(line, nullptr, false);
        benchmark::DoNotOptimize(v);
    }
    label(state);
}
BENCHMARK(nlohmann_parse)->DenseRange(0, 3);

void simdjson_parse_json(benchmark::State& state) {
    const std::string line = line_of(state.range(0));
    for (auto _ : state) {
        auto v = ecsd::protocol::parse_json(line);
        benchmark::DoNotOptimize(v);
    }
    label(state);
}
BENCHMARK(simdjson_parse_json)->DenseRange(0, 3);

void parse_line(benchmark::State& state) {
    const std::string line = line_of(state.range(0));
    const ecsd::protocol::parse_limits limits{};
    for (auto _ : state) {
        auto v = ecsd::protocol::parse_line(line, limits);
        benchmark::DoNotOptimize(v);
    }
    label(state);
}
BENCHMARK(parse_line)->DenseRange(0, 2);

// --- dispatch: the pipeline on one thread ------------------------------------------------------

/// The dispatcher's unit-test harness (services, a method table, a directory, an authenticated
/// caller) with every method and one paused world, "default", holding 100 entities of Position,
/// Velocity and Health (ecsd_load's spawn).
struct pipeline : ecsd::net::test::rpc_harness {
    std::uint64_t first = 0;

    pipeline() {
        spdlog::set_level(spdlog::level::err);
        ecsd::net::register_all_methods(table_);
        ecsd::world::world_settings s;
        s.name = "default";
        s.paused = true;
        auto w = std::make_shared<ecsd::world::world>(s);
        auto& reg = w->registry();
        for (int i = 0; i < 100; ++i) {
            const auto e = reg.create();
            if (i == 0) first = e;
            reg.emplace<ecsd::world::Position>(e, {1.0 + i / 60.0, 2.0});
            reg.emplace<ecsd::world::Velocity>(e, {0.5, 0.0});
            reg.emplace<ecsd::world::Health>(e, {100, 100});
        }
        (void)worlds_.add("default", std::move(w));
    }

    /// One line in, its answer out, as a connection runs it (the world job inline). `typed`: the
    /// parser reads get's params typed, as the request pipeline asks it to (else as a tree).
    std::size_t answer(const std::string& line, bool typed = true) {
        std::size_t bytes = 0;
        ecsd::protocol::parse_limits limits;
        if (typed) limits.entity_read_method = table_.entity_read_method();
        auto parsed = ecsd::protocol::parse_line(line, limits);
        for (auto& m : parsed.messages) {
            auto* req = std::get_if<ecsd::protocol::request>(&m);
            if (req == nullptr) throw std::runtime_error("the bench's line did not parse");
            auto p = dispatch_.prepare(std::move(*req), session_);
            if (p.job) {
                const auto result = dispatch_.run(*p.job);
                if (result.is_error) throw std::runtime_error("the bench's request failed");
                auto text = dispatch_.finish(*p.job, result);
                bytes += text ? text->size() : 0;
            } else if (p.response) {
                bytes += p.response->size();
            }
        }
        return bytes;
    }
};

void dispatch(benchmark::State& state) {
    pipeline pl;
    const std::string entity = std::to_string(pl.first);
    const std::string lines[] = {
        R"({"jsonrpc":"2.0","id":12345,"method":"server.ping"})",
        R"({"jsonrpc":"2.0","id":12345,"method":"world.get_components","params":{"world":"default","entity":)" +
            entity + "}}",
        R"({"jsonrpc":"2.0","id":12345,"method":"world.query","params":{"world":"default","query":"Position, Velocity, Health","limit":100}})",
    };
    // 3: get again with its params read as a tree (the way every other method's are), the
    // reference for the typed read in the same run.
    const auto which = state.range(0);
    const std::string& line = lines[which == 3 ? 1 : which];
    const bool typed = which != 3;
    std::size_t bytes = 0;
    for (auto _ : state) bytes += pl.answer(line, typed);
    benchmark::DoNotOptimize(bytes);
    static const char* const names[] = {"ping", "get", "query", "get, params as a tree"};
    state.SetLabel(names[which]);
}
BENCHMARK(dispatch)->DenseRange(0, 3);

}  // namespace

BENCHMARK_MAIN();
