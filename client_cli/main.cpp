// ecsctl: the command-line client of ecsd. One verb per run, a script (-f FILE or standard input), or an
// interactive shell when started on a terminal without a verb.

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "ecsd/protocol/version.hpp"
#include "errors.hpp"
#include "script.hpp"
#include "session.hpp"
#include "shell.hpp"
#include "verb_parser.hpp"
#include "watch.hpp"

namespace {

using namespace ecsd::cli;

constexpr const char* footer = R"(Run `ecsctl VERB --help` for a verb's arguments and examples.
Without a verb: reads commands from -f FILE, or from standard input when it is not a terminal
(script mode), or opens an interactive shell.

Environment: ECSD_HOST, ECSD_PORT, ECSD_TOKEN, ECSD_WORLD, ECSCTL_TIMEOUT stand in for the options;
ECSCTL_HISTORY names the shell's history file (default ~/.ecsctl_history).

Local commands (scripts and the shell; `help` there lists them in full):
  $name = VERB ...   keep a result: $name, ${name.path.0} in later lines
  $x = $i * 0.8      arithmetic: numbers, $variables, + - * / and parentheses
  echo WORDS...      print the words            use WORLD       later world.* calls go to WORLD
  expect A OP B      fail unless A OP B holds (== != < <= > >=), e.g. expect ${r.total} == 3
  repeat N COMMAND   run COMMAND N times with $i = 0..N-1 (in scripts also repeat N { lines })
  sleep SECONDS      wait (fractions allowed)   vars            list the variables
  help [VERB]        help                       exit, quit      stop

Output: tables on a terminal (numbers to 6 digits, fitted to the terminal's width; -o wide keeps cells
whole; a table on a pipe cuts cells at 40 columns), one JSON text per result otherwise (or with --json);
-o yaml for YAML. JSON and YAML are exact.
Exit codes: 0 ok, 1 server error, 2 usage error, 3 connection error or timeout.

Examples:
  ecsctl ping
  ecsctl watch 'Position, Velocity' --fields Position
  ecsctl spawn Position='{"x":0,"y":10}' Velocity='{"x":1,"y":0}' RigidBody
  ecsctl query 'Position, Velocity, !Frozen' --fields Position --limit 20
  ecsctl -o wide systems
  ecsctl --world arena step 60
  ecsctl -f setup.ecs --keep-going
  ecsctl call world.info '{"world":"default"}'
)";

/// @brief The values of `-o`.
constexpr std::array<std::string_view, 4> output_names{"table", "wide", "json", "yaml"};

/// @brief Checks a `-o` value; the message names the allowed ones.
std::string check_output(const std::string& value) {
    if (std::find(output_names.begin(), output_names.end(), value) != output_names.end()) {
        return {};
    }
    return "'" + value + "' is no output format; use table, wide, json or yaml";
}

/// @brief unknown_verb's message when the words the parser could not place name no verb, else nullopt.
std::optional<std::string> unknown_verb_in(const CLI::App& app) {
    std::vector<std::string> words;
    for (const auto* sub : app.get_subcommands()) {
        words.push_back(sub->get_name());  // a group such as `world` whose verb is unknown
    }
    const auto rest = app.remaining();
    words.insert(words.end(), rest.begin(), rest.end());
    return unknown_verb(words);
}

struct global_options {
    std::string host = "127.0.0.1";
    int port = 7777;
    std::string token;
    std::string world;
    double timeout = 10.0;
    bool json = false;
    std::string output;
    int precision = table_options{}.precision;
    std::string file;
    bool keep_going = false;
};

int run(int argc, char** argv) {
    CLI::App app{"ecsctl: the command-line client of ecsd (JSON-RPC over TCP)", "ecsctl"};
    app.footer(footer);
    app.fallthrough();  // `ecsctl get 42 --json`: options after the verb belong to ecsctl
    app.require_subcommand(0, 1);
    global_options g;
    app.add_option("--host", g.host, "server address")->envname("ECSD_HOST")->capture_default_str();
    app.add_option("-p,--port", g.port, "server port")
        ->envname("ECSD_PORT")
        ->check(CLI::Range(1, 65535))
        ->capture_default_str();
    app.add_option("--token", g.token, "authentication token, sent with server.auth first")
        ->envname("ECSD_TOKEN");
    app.add_option("-w,--world", g.world, "world for world.* calls (default: the server's, \"default\")")
        ->envname("ECSD_WORLD");
    app.add_option("-t,--timeout", g.timeout, "seconds to wait for the connection and for each answer")
        ->envname("ECSCTL_TIMEOUT")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_flag("-j,--json", g.json,
                 "print one JSON text per result (the default when stdout is not a terminal)");
    app.add_option("-o,--output", g.output,
                   "output format: table, wide (a table with whole cells), json or yaml (default: table on a "
                   "terminal, json otherwise)")
        ->check(CLI::Validator(check_output, "FORMAT"));
    app.add_option("--precision", g.precision,
                   "significant digits of numbers in tables; 0 prints them exactly (JSON and YAML always do)")
        ->check(CLI::Range(0, 17))
        ->capture_default_str();
    app.add_option("-f,--file", g.file, "run the commands in FILE ('-' for standard input)");
    app.add_flag("-k,--keep-going", g.keep_going, "script mode: run every line, even after one fails");
    app.set_version_flag("-V,--version", ecsd::protocol::version_line("ecsctl"));
    verb_parser parser(app);

    // `ecsctl help [VERB]` is a friendlier spelling of `ecsctl [VERB] --help`.
    if (argc >= 2 && std::string_view(argv[1]) == "help") {
        const std::vector<std::string> words(argv + 2, argv + argc);
        std::string name;
        for (const auto& word : words) {
            name += (name.empty() ? "" : " ") + word;
        }
        const std::string text = name.empty() ? app.help() : help_text(name);
        if (text.empty()) {
            std::cerr << "ecsctl: " << unknown_verb(words).value_or("no verb called '" + name + "'") << '\n';
            return static_cast<int>(exit_code::usage);
        }
        std::cout << text;
        return 0;
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);  // --help, --version
    } catch (const CLI::ParseError& e) {
        if (const auto message = unknown_verb_in(app)) {
            std::cerr << "ecsctl: " << *message << '\n';
        } else {
            std::cerr << "ecsctl: " << e.what() << "\nRun with --help for more information.\n";
        }
        return static_cast<int>(exit_code::usage);
    }

    connection_options conn;
    conn.host = g.host;
    conn.port = static_cast<std::uint16_t>(g.port);
    if (!g.token.empty()) {
        conn.token = g.token;
    }
    conn.timeout = std::chrono::milliseconds(static_cast<long long>(g.timeout * 1000.0));
    session s{.client = rpc_client(conn),
              .world = std::nullopt,
              .format = output_format::json_lines,
              .vars = {},
              .out = &std::cout,
              .err = &std::cerr,
              .tables = {}};
    if (!g.world.empty()) {
        s.world = g.world;
    }
    s.client.on_reconnect = [&s](const std::string& message) {
        *s.err << "ecsctl: note: " << message << '\n';
    };
    const bool out_tty = isatty(STDOUT_FILENO) != 0;
    if (g.json || g.output == "json") {
        s.format = output_format::json_lines;
    } else if (g.output == "yaml") {
        s.format = output_format::yaml;
    } else if (g.output == "table" || g.output == "wide" || out_tty) {
        s.format = output_format::table;
    }
    s.tables.precision = g.precision;
    if (g.output == "wide") {
        s.tables.max_cell_width = 0;
    } else if (out_tty) {
        s.tables.max_width = terminal_width();  // rows wider than the terminal shrink, never wrap
    }

    if (const verb* v = parser.selected(); v != nullptr) {
        if (!g.file.empty()) {
            std::cerr << "ecsctl: give either a verb or -f FILE, not both\n";
            return static_cast<int>(exit_code::usage);
        }
        const auto code = guarded(s, "ecsctl", [&] {
            if (v->streams) {
                run_stream(s, *v, parser.input());
            } else {
                std::cout << present(s, *v, run_verb(s, *v, parser.input()));
            }
        });
        return static_cast<int>(code);
    }
    if (!app.get_subcommands().empty()) {
        return static_cast<int>(exit_code::usage);  // a bare group: `ecsctl world`
    }

    if (!g.file.empty() && g.file != "-") {
        std::ifstream in(g.file);
        if (!in) {
            std::cerr << "ecsctl: cannot open " << g.file << '\n';
            return static_cast<int>(exit_code::usage);
        }
        return static_cast<int>(run_script(s, in, g.file, g.keep_going));
    }
    if (g.file == "-" || isatty(STDIN_FILENO) == 0) {
        return static_cast<int>(run_script(s, std::cin, "<stdin>", g.keep_going));
    }
    return static_cast<int>(run_shell(s));
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {  // a bug: say so rather than abort
        std::cerr << "ecsctl: internal error: " << e.what() << '\n';
        return 1;
    }
}
