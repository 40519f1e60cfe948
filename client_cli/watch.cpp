#include "watch.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <ostream>

#include "args.hpp"
#include "errors.hpp"
#include "output.hpp"

namespace ecsd::cli {

namespace {

/// @brief `value` as a non-negative integer (parsed JSON holds them unsigned, built JSON signed).
std::optional<std::uint64_t> natural(const json& value) {
    if (value.is_number_unsigned()) {
        return value.get<std::uint64_t>();
    }
    if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
        return static_cast<std::uint64_t>(value.get<std::int64_t>());
    }
    return std::nullopt;
}

std::optional<std::uint64_t> entity_id(const json& item) {
    if (!item.is_object()) {
        return std::nullopt;
    }
    const auto it = item.find("entity");
    return it == item.end() ? std::nullopt : natural(*it);
}

json components_of(const json& item) {
    const auto it = item.find("components");
    return it != item.end() && it->is_object() ? *it : json::object();
}

/// @brief The members of `params` that are arrays, or an empty array.
const json& list(const json& params, const char* name) {
    static const json none = json::array();
    const auto it = params.find(name);
    return it != params.end() && it->is_array() ? *it : none;
}

/// @brief `line` cut to `cols` display columns.
std::string cut(std::string line, std::size_t cols) {
    std::size_t width = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if ((static_cast<unsigned char>(line[i]) & 0xC0U) == 0x80U) {
            continue;  // a UTF-8 continuation byte
        }
        if (width == cols) {
            line.resize(i);
            break;
        }
        ++width;
    }
    return line;
}

}  // namespace

// --- the state -----------------------------------------------------------------------------------------

void watch_state::replace_all(const json& entities) {
    entities_.clear();
    if (!entities.is_array()) {
        return;
    }
    for (const auto& item : entities) {
        if (const auto id = entity_id(item)) {
            entities_[*id] = components_of(item);
        }
    }
}

void watch_state::start(const json& answer) {
    *this = watch_state{};
    if (!answer.is_object()) {
        return;
    }
    subscription_ = answer.value("subscription", json());
    tick_ = natural(answer.value("tick", json())).value_or(0);
    replace_all(answer.value("entities", json::array()));
}

void watch_state::apply(const json& params) {
    if (!params.is_object()) {
        return;
    }
    ++notifications_;
    if (const auto t = params.find("tick"); t != params.end() && natural(*t)) {
        tick_ = *natural(*t);
    }
    if (const auto c = params.find("coalesced"); c != params.end() && natural(*c)) {
        coalesced_ += *natural(*c);
    }
    if (params.value("resync", false)) {
        ++resyncs_;
        replace_all(params.value("entities", json::array()));
    }
    for (const auto& item : list(params, "entered")) {
        if (const auto id = entity_id(item)) {
            entities_[*id] = components_of(item);
        }
    }
    for (const auto& item : list(params, "changed")) {
        const auto id = entity_id(item);
        if (!id) {
            continue;
        }
        auto& held = entities_[*id];
        if (!held.is_object()) {
            held = json::object();
        }
        const json given = components_of(item);
        for (const auto& [name, value] : given.items()) {
            held[name] = value;
        }
        for (const auto& name : list(item, "removed")) {
            if (name.is_string()) {
                held.erase(name.get<std::string>());
            }
        }
    }
    for (const auto& item : list(params, "left")) {
        if (const auto id = entity_id(item)) {
            entities_.erase(*id);
        }
    }
    if (params.value("ended", false)) {
        ended_ = true;
        end_reason_ = params.value("reason", "");
    }
}

// --- the frame -----------------------------------------------------------------------------------------

std::string compact_value(const json& value) {
    if (value.is_number_float()) {
        std::array<char, 64> text{};
        std::snprintf(text.data(), text.size(), "%.3f", value.get<double>());
        std::string out(text.data());
        if (out.find('.') != std::string::npos) {
            while (out.back() == '0') {
                out.pop_back();
            }
            if (out.back() == '.') {
                out.pop_back();
            }
        }
        return out == "-0" ? "0" : out;
    }
    if (value.is_object()) {
        if (value.empty()) {
            return "yes";
        }
        std::string out;
        for (const auto& [key, inner] : value.items()) {
            out += (out.empty() ? "" : " ") + key + "=" +
                   (inner.is_object() && !inner.empty() ? "{" + compact_value(inner) + "}"
                                                        : compact_value(inner));
        }
        return out;
    }
    if (value.is_array()) {
        std::string out = "[";
        for (const auto& item : value) {
            out += (out.size() > 1 ? "," : "") + compact_value(item);
        }
        return out + "]";
    }
    return cell_text(value);
}

std::string render_watch(const watch_state& state, std::string_view world,
                         const std::vector<std::string>& fields, screen_size size) {
    const auto cols = static_cast<std::size_t>(std::max(size.cols, 10));
    const auto lines = static_cast<std::size_t>(std::max(size.rows - 1, 3));  // never scroll the screen

    std::string header = "world " + std::string(world) + "  tick " + std::to_string(state.tick()) +
                         "  entities " + std::to_string(state.entities().size()) + "  notifications " +
                         std::to_string(state.notifications());
    if (state.coalesced() > 0) {
        header += "  coalesced " + std::to_string(state.coalesced());
    }
    if (state.resyncs() > 0) {
        header += "  resyncs " + std::to_string(state.resyncs());
    }
    header += state.ended() ? "  ended: " + state.end_reason() : std::string("  (Ctrl-C to stop)");

    std::vector<std::string> columns = fields;
    if (columns.empty()) {
        for (const auto& [id, components] : state.entities()) {
            for (const auto& [name, ignored] : components.items()) {
                if (std::find(columns.begin(), columns.end(), name) == columns.end()) {
                    columns.push_back(name);
                }
            }
        }
    }
    table t;
    t.headers.push_back("entity");
    t.headers.insert(t.headers.end(), columns.begin(), columns.end());

    const std::size_t room = lines - 2;  // below the header and the column headers
    const std::size_t total = state.entities().size();
    const std::size_t shown = total <= room ? total : room - 1;
    for (const auto& [id, components] : state.entities()) {
        if (t.rows.size() == shown) {
            break;
        }
        std::vector<std::string> row{std::to_string(id)};
        for (const auto& name : columns) {
            const auto it = components.find(name);
            row.push_back(it == components.end() ? "" : compact_value(*it));
        }
        t.rows.push_back(std::move(row));
    }

    std::string out = cut(header, cols) + "\n";
    std::string body = format_table(t);
    for (std::size_t start = 0; start < body.size();) {
        const auto end = body.find('\n', start);
        out += cut(body.substr(start, end - start), cols) + "\n";
        start = end + 1;
    }
    if (shown < total) {
        out += cut("... " + std::to_string(total - shown) + " more (" + std::to_string(shown) + " of " +
                       std::to_string(total) + " shown)",
                   cols) +
               "\n";
    }
    return out;
}

// --- the I/O ---------------------------------------------------------------------------------------------

namespace {

using clock = std::chrono::steady_clock;

volatile std::sig_atomic_t interrupted = 0;  // NOLINT: set by the SIGINT handler

void on_sigint(int /*signal*/) {
    interrupted = 1;
}

/// @brief Catches the first Ctrl-C while a watch runs (a second one kills as usual); restores the
///        previous handler (the shell's, or the default) afterwards.
class sigint_catcher {
  public:
    sigint_catcher() {
        interrupted = 0;
        struct sigaction action {};
        action.sa_handler = on_sigint;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESETHAND;
        installed_ = sigaction(SIGINT, &action, &previous_) == 0;
    }
    sigint_catcher(const sigint_catcher&) = delete;
    sigint_catcher& operator=(const sigint_catcher&) = delete;
    ~sigint_catcher() {
        if (installed_) {
            sigaction(SIGINT, &previous_, nullptr);
        }
    }

  private:
    struct sigaction previous_ {};
    bool installed_ = false;
};

screen_size terminal_size() {
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
        return {ws.ws_row, ws.ws_col};
    }
    return {};
}

/// @brief Draws frames over the whole terminal, each replacing the last in place.
class live_screen {
  public:
    explicit live_screen(std::ostream& out) : out_(out) {
        out_ << "\x1b[?25l\x1b[H\x1b[2J";  // hide the cursor, clear
    }
    live_screen(const live_screen&) = delete;
    live_screen& operator=(const live_screen&) = delete;
    ~live_screen() {
        out_ << "\x1b[?25h" << std::flush;  // the last frame stays on screen
    }

    void draw(const std::string& frame) {
        std::string text = "\x1b[H";
        for (std::size_t start = 0; start < frame.size();) {
            const auto end = frame.find('\n', start);
            text.append(frame, start, end - start);
            text += "\x1b[K\n";  // clear what the previous frame left on this line
            start = end + 1;
        }
        text += "\x1b[J";  // and below
        out_ << text << std::flush;
    }

  private:
    std::ostream& out_;
};

}  // namespace

std::string monitor_line(const json& params) {
    if (!params.is_object()) {
        return cell_text(params);
    }
    if (const auto dropped = params.find("dropped"); dropped != params.end() && !params.contains("method")) {
        return "(" + cell_text(*dropped) + " requests dropped: this monitor read too slowly)";
    }
    std::string line;
    if (const auto time = params.find("time"); time != params.end() && time->is_number()) {
        std::array<char, 48> text{};
        std::snprintf(text.data(), text.size(), "%.6f", time->get<double>());
        line += text.data();
        line += ' ';
    }
    line += "[" + cell_text(params.value("connection", json("?")));
    if (const auto peer = params.find("peer"); peer != params.end() && peer->is_string()) {
        line += " " + peer->get<std::string>();
    }
    line += "] " + cell_text(params.value("method", json("?")));
    if (const auto args = params.find("params"); args != params.end() && !args->is_null()) {
        line += " " + args->dump(-1, ' ', false, json::error_handler_t::replace);
    }
    return line;
}

void run_monitor(session& s, const verb& v, const verb_input& input) {
    const request req = v.build(input);
    std::optional<std::uint64_t> count;
    if (auto n = input.one("--count")) {
        count = parse_count(*n, "--count");
    }
    sigint_catcher catcher;  // before the call: a Ctrl-C meanwhile still stops the feed
    s.client.drop_notifications();
    (void)s.client.call(req.method, req.params);
    if (s.format == output_format::table) {
        *s.out << "monitoring the requests of every other connection (Ctrl-C to stop)\n" << std::flush;
    }
    constexpr auto poll_period = std::chrono::milliseconds(100);  // how soon Ctrl-C is noticed
    std::uint64_t shown = 0;
    while (interrupted == 0 && (!count || shown < *count)) {
        const auto note = s.client.next_notification(clock::now() + poll_period);
        // Only the monitor's own lines: a request (`method`) or a note of lines lost (`dropped`).
        if (!note || !note->is_object() || note->contains("subscription") ||
            !(note->contains("method") || note->contains("dropped"))) {
            continue;
        }
        if (note->contains("method")) {
            ++shown;
        }
        if (s.format == output_format::table) {
            *s.out << monitor_line(*note) << '\n' << std::flush;
        } else {
            *s.out << render(*note, s.format) << std::flush;
        }
    }
    (void)s.client.call(req.method, json{{"stop", true}});
    s.client.drop_notifications();
}

void run_stream(session& s, const verb& v, const verb_input& input) {
    if (v.method == "server.monitor") {
        run_monitor(s, v, input);
    } else {
        run_watch(s, v, input);
    }
}

void run_watch(session& s, const verb& v, const verb_input& input) {
    request req = v.build(input);
    apply_world(req, s.world);
    std::optional<std::uint64_t> count;
    if (auto n = input.one("--count")) {
        count = parse_count(*n, "--count");
    }
    std::vector<std::string> fields;
    for (const auto& name : split_list(input.all("--fields"))) {
        fields.push_back(name.get<std::string>());
    }
    const std::string world = req.params.value("world", "default");

    sigint_catcher catcher;  // before subscribing: a Ctrl-C meanwhile still unsubscribes
    s.client.drop_notifications();
    const json answer = s.client.call(req.method, req.params);
    watch_state state;
    state.start(answer);

    std::optional<live_screen> screen;
    if (s.format == output_format::table) {
        screen.emplace(*s.out);
        screen->draw(render_watch(state, world, fields, terminal_size()));
    } else {
        *s.out << render(answer, s.format) << std::flush;  // JSON lines, or YAML documents
    }

    constexpr auto frame_period = std::chrono::milliseconds(50);  // at most 20 frames a second
    constexpr auto poll_period = std::chrono::milliseconds(100);  // how soon Ctrl-C is noticed
    auto last_draw = clock::now();
    bool dirty = false;
    std::uint64_t received = 0;
    while (interrupted == 0 && !state.ended() && (!count || received < *count)) {
        const auto wait_until = dirty ? last_draw + frame_period : clock::now() + poll_period;
        const auto note = s.client.next_notification(wait_until);
        if (note && note->is_object() && note->value("subscription", json()) == state.subscription()) {
            state.apply(*note);
            ++received;
            if (screen) {
                dirty = true;
            } else {
                *s.out << render(*note, s.format) << std::flush;
            }
        }
        if (dirty && (!note || clock::now() - last_draw >= frame_period)) {
            screen->draw(render_watch(state, world, fields, terminal_size()));
            last_draw = clock::now();
            dirty = false;
        }
    }
    if (dirty) {
        screen->draw(render_watch(state, world, fields, terminal_size()));
    }
    if (!state.ended()) {
        json params = {{"subscription", state.subscription()}};
        if (req.params.contains("world")) {
            params["world"] = req.params["world"];
        }
        try {
            (void)s.client.call("world.unwatch", params);
        } catch (const server_error& e) {
            if (e.reason() != "no_such_subscription") {  // it ended meanwhile: nothing to undo
                throw;
            }
        }
    }
    s.client.drop_notifications();
}

}  // namespace ecsd::cli
