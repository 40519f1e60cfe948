// Reading a request line (issue 14): nlohmann's parser, the reference, against protocol::parse_json
// (simdjson reading, the same nlohmann tree built), and the whole of protocol::parse_line, for the
// lines ecsd_load's presets send and for a journal record. Run by hand from a Release build:
//   build/release/bin/request_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <string>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "ecsd/protocol/json_parse.hpp"
#include "ecsd/protocol/jsonrpc.hpp"

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

}  // namespace

BENCHMARK_MAIN();
