#include "hosting/world_log.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>

#include <spdlog/spdlog.h>

#include "config.hpp"
#include "ecs/value_codec.hpp"
#include "ecsd/protocol/depth.hpp"
#include "ecsd/protocol/json_parse.hpp"
#include "ecsd/protocol/names.hpp"
#include "hosting/hosted_world.hpp"
#include "persist/atomic_file.hpp"
#include "persist/snapshot.hpp"
#include "world/world.hpp"

namespace ecsd::net {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
constexpr std::string_view binary_suffix = ".snapshot";
constexpr std::string_view json_suffix = ".snapshot.json";

/// @brief The journal_seq a snapshot file says it includes; 0 when it cannot tell.
std::uint64_t journal_seq_of(const fs::path& path) {
    std::string bytes;
    if (!persist::read_file_from(path, 0, bytes)) return 0;
    if (persist::is_binary_snapshot(bytes)) return persist::binary_snapshot_journal_seq(bytes);
    const json doc = protocol::parse_document(bytes);
    return doc.is_object() && doc.contains("journal_seq") && doc["journal_seq"].is_number_unsigned()
               ? doc["journal_seq"].get<std::uint64_t>()
               : 0;
}
}  // namespace

namespace {
/// @brief The last line of defence: no path is ever built from a name the protocol would refuse.
const std::string& approved(const std::string& world) {
    if (auto problem = protocol::world_name_problem(world))
        throw std::invalid_argument("refusing to build a path from world name '" + world + "': " + *problem);
    return world;
}
}  // namespace

fs::path world_log::snapshot_path(const fs::path& dir, const std::string& world,
                                  persist::snapshot_format format) {
    std::string name =
        approved(world);  // appended, not operator+: gcc 12 -O3 warns falsely (-Wrestrict) on that
    name += format == persist::snapshot_format::json_text ? json_suffix : binary_suffix;
    return dir / name;
}
fs::path world_log::journal_path(const fs::path& dir, const std::string& world) {
    return dir / (approved(world) + ".journal");
}

world_log::world_log(const fs::path& dir, const std::string& world, persist::fsync_policy policy,
                     std::uint64_t seq, persist::snapshot_format format)
    : dir_(dir), world_(world), journal_(journal_path(dir, world), policy), format_(format), seq_(seq) {}

std::string world_log::snapshot_bytes(const world::world& w, persist::snapshot_format format) const {
    if (format == persist::snapshot_format::json_text)
        return persist::seal_snapshot(persist::snapshot_text(w, seq_));
    return persist::binary_snapshot(w, seq_, format == persist::snapshot_format::zstd);
}

void world_log::remove_other_form(persist::snapshot_format written) const noexcept {
    const auto other = written == persist::snapshot_format::json_text ? persist::snapshot_format::binary
                                                                      : persist::snapshot_format::json_text;
    std::error_code ignored;
    fs::remove(snapshot_path(dir_, world_, other), ignored);
}

void world_log::append(const json& record) {
    try {
        journal_.append(record);  // on failure nothing stays written (persist/journal.hpp)
    } catch (const persist::storage_error& e) {
        if (!failing_)
            spdlog::error(
                "world '{}': journal write failed: {}; mutating requests are refused (storage_error) and "
                "not applied until it can be written again",
                world_, e.what());
        failing_ = true;
        throw;
    }
    if (failing_)
        spdlog::warn("world '{}': journal writes work again ({})", world_, journal_.path().string());
    failing_ = false;
}

journal_mark world_log::record_request(std::uint64_t tick, const std::string& method, const json& params) {
    const journal_mark mark{journal_.bytes(), seq_};
    append({{"seq", seq_ + 1}, {"tick", tick}, {"method", method}, {"params", params}});
    ++seq_;
    return mark;
}

void world_log::undo(const journal_mark& mark) {
    journal_.rollback(mark.bytes);
    seq_ = mark.seq;
}

void world_log::record_tick(std::uint64_t tick) {
    append({{"seq", seq_ + 1}, {"tick", tick}});
    ++seq_;
}

world_log::~world_log() {
    abandon_background_save();
}

void world_log::abandon_background_save() noexcept {
    if (!bg_) return;
    bg_->abandon();
    bg_.reset();
    std::error_code ignored;
    fs::remove(persist::temp_path_for(bg_path_), ignored);
}

bool world_log::start_background_save(const world::world& w, memory::spare_blocks spares) {
    if (bg_) return false;
    const auto path = snapshot_path(dir_, world_, format_);
    const auto t0 = std::chrono::steady_clock::now();
    try {
        // The child sees the world as it is now, and the journal's first `bytes()` bytes are
        // exactly the records up to seq_: the snapshot and the journal meet at that seam.
        const auto hot = w.registry().arrays_written_lately();
        bg_ = memory::background_save::start(
            [this, &w, path] {
                const std::string bytes = snapshot_bytes(w, format_);
                persist::write_file_atomically(path, bytes);
                return static_cast<std::uint64_t>(bytes.size());
            },
            hot, std::move(spares));
    } catch (const std::system_error& e) {  // no fork (or no socket pair for it)
        spdlog::warn("world '{}': {}: saving in-process instead (the world waits for it)", world_, e.what());
        (void)save(w);
        return false;
    }
    bg_journal_bytes_ = journal_.bytes();
    bg_tick_ = w.tick();
    bg_path_ = path;
    bg_started_ = t0;
    spdlog::debug("world '{}': background save of tick {} started (pid {}, fork {:.2f} ms)", world_, bg_tick_,
                  bg_->pid(), bg_->fork_ms());
    return true;
}

bool world_log::finish_background_save() {
    if (!bg_) return true;
    const auto state = bg_->poll();
    if (state == memory::background_save::state::running) return false;
    const auto path = bg_path_;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - bg_started_).count();
    if (state == memory::background_save::state::failed) {
        spdlog::error("world '{}': autosave failed: {}; the journal keeps every record", world_,
                      bg_->error());
        abandon_background_save();
        return true;
    }
    remove_other_form(format_);
    try {
        journal_.drop_prefix(bg_journal_bytes_);
    } catch (const std::exception& e) {
        // The snapshot is on disk; replay skips the records it includes, so nothing is wrong, the
        // journal is only longer than it needs to be until the next save.
        spdlog::warn("world '{}': saved, but the journal could not be shortened: {}", world_, e.what());
    }
    spdlog::info(
        "world '{}': saved tick {} to {} in the background ({} bytes, {:.1f} ms; the world "
        "stopped {:.2f} ms for the fork, {:.2f} ms of it working; the saving process had its own copy "
        "of {:.1f} MB of arrays {:.1f} ms after it, {:.1f} MB of them in memory made ready ahead)",
        world_, bg_tick_, path.string(), bg_->bytes(), ms, bg_->fork_ms(), bg_->fork_cpu_ms(),
        static_cast<double>(bg_->copied_bytes()) / 1e6, bg_->copy_ms(),
        static_cast<double>(bg_->spared_bytes()) / 1e6);
    bg_.reset();
    return true;
}

save_report world_log::save(const world::world& w, std::optional<persist::snapshot_format> format) {
    abandon_background_save();  // this save is newer; the child must not rename an older one over it
    const auto t0 = std::chrono::steady_clock::now();
    const auto form = format.value_or(format_);
    const std::string text = snapshot_bytes(w, form);
    const auto path = snapshot_path(dir_, world_, form);
    persist::write_file_atomically(path, text);
    remove_other_form(form);
    journal_.truncate();  // a crash before this line: replay skips records with seq <= the snapshot's
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    spdlog::info("world '{}': saved tick {} to {} ({} bytes, {:.1f} ms)", world_, w.tick(), path.string(),
                 text.size(), ms);
    return {path.string(), text.size(), w.tick(), ms};
}

std::optional<fs::path> world_log::find_snapshot(const fs::path& dir, const std::string& world) {
    std::error_code ec;
    const auto binary = snapshot_path(dir, world, persist::snapshot_format::binary);
    const auto text = snapshot_path(dir, world, persist::snapshot_format::json_text);
    const bool has_binary = fs::exists(binary, ec);
    const bool has_text = fs::exists(text, ec);
    if (has_binary && has_text) return journal_seq_of(text) > journal_seq_of(binary) ? text : binary;
    if (has_binary) return binary;
    if (has_text) return text;
    return std::nullopt;
}

void world_log::remove_files() {
    abandon_background_save();
    std::error_code ignored;
    // The journal first: a crash in between leaves a snapshot alone (the world comes back), never
    // a journal without its snapshot (which start-up refuses).
    fs::remove(journal_path(dir_, world_), ignored);
    fs::remove(snapshot_path(dir_, world_, persist::snapshot_format::binary), ignored);
    fs::remove(snapshot_path(dir_, world_, persist::snapshot_format::json_text), ignored);
}

void attach_log(hosted_world& hosted, const server_config& cfg, std::uint64_t seq, bool save_now) {
    if (cfg.data_dir.empty()) return;
    auto log = std::make_unique<world_log>(
        cfg.data_dir, hosted.name(), persist::parse_fsync_policy(cfg.appendfsync), seq,
        persist::parse_snapshot_format(cfg.snapshot_format).value_or(persist::snapshot_format::binary));
    if (save_now) {
        try {
            log->save(hosted.world());
        } catch (const std::exception&) {
            // No snapshot (disk full): leave no journal either, or start-up would find it orphaned.
            const auto journal = log->journal_path(cfg.data_dir, hosted.name());
            log.reset();
            std::error_code ec;
            if (fs::exists(journal, ec) && fs::file_size(journal, ec) == 0) fs::remove(journal, ec);
            throw;
        }
    }
    hosted.set_log(std::move(log), cfg.autosave);
}

std::vector<std::string> saved_world_names(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const auto file = entry.path().filename().string();
        const auto suffix = file.ends_with(json_suffix) ? json_suffix : binary_suffix;
        if (file.size() <= suffix.size() || !file.ends_with(suffix) || file.front() == '.') continue;
        auto name = file.substr(0, file.size() - suffix.size());
        if (auto problem = protocol::world_name_problem(name)) {
            spdlog::warn("{}: not loaded: {}", (dir / file).string(), *problem);
            continue;
        }
        names.push_back(std::move(name));
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());  // both forms after a crash
    return names;
}

namespace {

std::string read_file(const fs::path& path) {
    std::string out;
    if (!persist::read_file_from(path, 0, out)) throw persist::persist_error(path.string() + ": cannot open");
    return out;
}

std::string hex8(std::uint32_t v) {
    char text[9];
    std::snprintf(text, sizeof text, "%08x", v);
    return text;
}

std::string loss_of(const std::string& name) {
    return name == "default" ? "the world 'default' would start empty"
                             : "the world '" + name + "' would be gone";
}

/// @brief The snapshot of `name`, checked: the world it holds, or null when --repair moved it aside.
std::shared_ptr<world::world> read_snapshot(const fs::path& dir, const std::string& name, bool repair,
                                            std::uint64_t& journal_seq, std::vector<std::string>& repairs) {
    const auto snap_path = world_log::find_snapshot(dir, name).value_or(world_log::snapshot_path(dir, name));
    const auto journal_file = world_log::journal_path(dir, name);
    const std::string text = read_file(snap_path);
    const bool binary = persist::is_binary_snapshot(text);
    const auto seal = binary ? persist::check_binary_seal(text) : persist::check_snapshot_seal(text);

    // Parse and build; `problem` says why it cannot be loaded (with the byte offset when JSON says it).
    std::string problem;
    const auto keep_problem = [&](const persist::persist_error& e) {
        problem = e.what();
        if (problem.starts_with(snap_path.string() + ": ")) problem.erase(0, snap_path.string().size() + 2);
    };
    std::shared_ptr<world::world> loaded;
    std::uint64_t seq = 0;
    if (binary) {
        persist::check_binary_header(text, snap_path.string());  // too new: never repaired
        seq = persist::binary_snapshot_journal_seq(text);
        try {
            loaded = persist::from_binary_snapshot(text, snap_path.string());
        } catch (const persist::persist_error& e) {
            keep_problem(e);
        }
    } else {
        json doc;
        if (protocol::exceeds_depth(text, protocol::max_document_depth)) {
            problem = "nested deeper than " + std::to_string(protocol::max_document_depth) +
                      " levels, deeper than any snapshot ecsd writes";
        } else {
            try {
                doc = json::parse(text);
            } catch (const json::parse_error& e) {
                problem = "not valid JSON at byte offset " + std::to_string(e.byte > 0 ? e.byte - 1 : 0);
            }
        }
        if (problem.empty()) {
            persist::check_snapshot_header(doc,
                                           snap_path.string());  // not a snapshot, or too new: never repaired
            seq = persist::snapshot_journal_seq(doc);
            try {
                loaded = persist::from_snapshot(doc, snap_path.string());
            } catch (const persist::persist_error& e) {
                keep_problem(e);
            }
        }
    }
    std::string damage;
    if (seal.status == persist::snapshot_seal::state::mismatch)
        damage = "snapshot checksum mismatch: the checksum at byte offset " + std::to_string(seal.offset) +
                 " says crc32 " + hex8(seal.stored) + " but bytes 0.." + std::to_string(seal.offset) +
                 " give " + hex8(seal.computed) + " (the file was changed or damaged after it was written)";
    if (!problem.empty()) damage += (damage.empty() ? "" : "; ") + problem;
    if (damage.empty()) {
        if (seal.status == persist::snapshot_seal::state::missing)
            spdlog::warn(
                "{}: snapshot has no checksum (written by an older ecsd, or by hand): loaded unverified; the "
                "next save adds one",
                snap_path.string());
        journal_seq = seq;
        return loaded;
    }
    const auto damaged = snap_path.string() + ".damaged";
    if (loaded) {  // only the checksum is wrong: the document itself still loads
        if (!repair)
            throw persist::persist_error(
                snap_path.string() + ": " + damage +
                ". Refusing to start. Start ecsd with --repair to load it as it is (whatever "
                "values were changed stay in the world; a copy is kept as " +
                damaged + ")");
        const auto copy = persist::keep_aside(snap_path, /*copy=*/true);
        const auto note = snap_path.string() + ": " + damage +
                          "; --repair: loaded as it is, values that were changed " +
                          "stay in the world; the file as found is kept as " + copy.string();
        spdlog::warn("{}", note);
        repairs.push_back(note);
        journal_seq = seq;
        return loaded;
    }
    std::error_code ec;
    const bool has_journal = fs::exists(journal_file, ec);
    if (!repair)
        throw persist::persist_error(
            snap_path.string() + ": " + damage + ". Refusing to start. Start ecsd with " +
            "--repair to move it" + (has_journal ? " and " + journal_file.string() : "") +
            " aside (as FILE.damaged): " + loss_of(name) + ", with every entity in it");
    const auto moved = persist::keep_aside(snap_path, /*copy=*/false);
    std::string note = snap_path.string() + ": " + damage + "; --repair: moved it aside as " + moved.string();
    if (has_journal)
        note += " and " + journal_file.string() + " as " + persist::keep_aside(journal_file, false).string();
    note += "; " + loss_of(name) + " (its entities are lost)";
    spdlog::warn("{}", note);
    repairs.push_back(note);
    return nullptr;
}

/// @brief Start-up reads the journal (checks each record and parses it) on a thread of its own
/// while the caller applies what was read before: records still apply one at a time and in order,
/// so the world that results is the same. Batches of records go back and forth between the two;
/// the reading thread also destroys the params the caller is done with, when it reuses a batch.
class journal_prefetch {
  public:
    /// @brief Starts reading. Requests with seq past `parse_after` come parsed.
    journal_prefetch(persist::journal_reader& reader, std::uint64_t parse_after)
        : reader_(reader), parse_after_(parse_after) {
        for (auto& b : pool_) {
            b.records.resize(batch_size);
            free_.push_back(&b);
        }
        worker_ = std::thread([this] { run(); });
    }
    journal_prefetch(const journal_prefetch&) = delete;
    journal_prefetch& operator=(const journal_prefetch&) = delete;
    ~journal_prefetch() {
        {
            const std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        worker_.join();
    }

    /// @brief The next record, or null after the last. Where the reader found damage, rethrows
    /// its journal_error in that record's place.
    persist::journal_record* next() {
        for (;;) {
            if (current_ != nullptr) {
                if (at_ < current_->size) return &current_->records[at_++];
                if (current_->error) std::rethrow_exception(current_->error);
                if (current_->last) return nullptr;
                {
                    const std::lock_guard lock(mutex_);
                    free_.push_back(current_);
                }
                wake_.notify_all();
            }
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return !full_.empty(); });
            current_ = full_.front();
            full_.pop_front();
            at_ = 0;
        }
    }

  private:
    static constexpr std::size_t batch_size = 512;
    struct batch {
        std::vector<persist::journal_record> records;
        std::size_t size = 0;
        std::exception_ptr error;
        bool last = false;
    };

    void run() {
        for (;;) {
            batch* b = nullptr;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || !free_.empty(); });
                if (stopping_) return;
                b = free_.front();
                free_.pop_front();
            }
            b->size = 0;
            b->error = nullptr;
            try {
                while (b->size < batch_size && reader_.next(b->records[b->size], parse_after_)) ++b->size;
                b->last = b->size < batch_size;
            } catch (...) {
                b->error = std::current_exception();
                b->last = true;
            }
            {
                const std::lock_guard lock(mutex_);
                full_.push_back(b);
            }
            wake_.notify_all();
            if (b->last) return;
        }
    }

    persist::journal_reader& reader_;
    const std::uint64_t parse_after_;
    std::array<batch, 4> pool_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<batch*> free_;  ///< for the reader to fill
    std::deque<batch*> full_;  ///< for the caller to apply, in order
    bool stopping_ = false;
    batch* current_ = nullptr;  ///< the caller's
    std::size_t at_ = 0;
    std::thread worker_;
};

loaded_world load_once(const fs::path& dir, const std::string& name, asio::io_context& io,
                       const journal_replay& replay, bool repair, std::vector<std::string>& repairs) {
    loaded_world out;
    std::shared_ptr<world::world> loaded = read_snapshot(dir, name, repair, out.seq, repairs);
    if (!loaded) return out;
    const std::uint64_t snapshot_seq = out.seq;

    const auto journal_file = world_log::journal_path(dir, name);
    persist::journal_reader journal(journal_file);
    out.hosted = std::make_shared<hosted_world>(io, name, loaded);
    const auto damage_at = [&](const persist::journal_record& r, std::uint64_t i, const std::string& what) {
        return persist::journal_error(journal_file, r.offset, journal.records() - i,
                                      journal.valid_bytes() - r.offset, what);
    };
    // Replay through the same handlers and the same deterministic tick loop. A damaged record
    // throws in its place, before anything after it applies: the world being loaded is dropped.
    std::uint64_t records = 0;
    std::uint64_t last_seq = 0;
    if (journal.records() > 0) {
        journal_prefetch read(journal, snapshot_seq);
        for (persist::journal_record* r = read.next(); r != nullptr; r = read.next(), ++records) {
            const auto seq = r->seq;
            if (records == 0 && seq > snapshot_seq + 1)
                throw damage_at(*r, 0,
                                "journal sequence gap: the snapshot includes records up to " +
                                    std::to_string(snapshot_seq) + " but the journal starts at record " +
                                    std::to_string(seq));
            last_seq = seq;
            if (seq <= out.seq) continue;  // already in the snapshot (a crash between save and truncate)
            const auto tick = r->tick;
            auto& w = *loaded;
            if (tick < w.tick())
                throw damage_at(*r, records,
                                "record " + std::to_string(seq) + " is for tick " + std::to_string(tick) +
                                    " but the world is already at " + std::to_string(w.tick()));
            while (w.tick() < tick) w.run_tick();
            if (r->request) {
                const auto& method = r->method;
                const auto done = replay(*out.hosted, method, r->params);
                if (!done.known)
                    throw damage_at(*r, records,
                                    "unknown method " + method + " in record " + std::to_string(seq));
                if (!done.failure.empty())
                    throw damage_at(*r, records,
                                    "record " + std::to_string(seq) + " (" + method +
                                        ") no longer applies: " + done.failure);
            }
            out.seq = seq;
            ++out.replayed;
        }
    }
    // Only now is anything written: a journal that refused to load is left as it was found.
    if (journal.torn_tail()) {
        spdlog::warn("{}: dropped a torn last record at byte offset {} (crash mid-write)",
                     journal_file.string(), journal.valid_bytes());
        persist::truncate_journal(journal_file, journal.valid_bytes());
        out.torn_tail = true;
    }
    // All in the snapshot (a crash between a save and emptying the journal): empty it.
    if (records > 0 && last_seq <= snapshot_seq) persist::truncate_journal(journal_file, 0);
    return out;
}

}  // namespace

loaded_world load_world(const fs::path& dir, const std::string& name, asio::io_context& io,
                        const journal_replay& replay, bool repair) {
    std::vector<std::string> repairs;
    for (;;) {
        try {
            auto out = load_once(dir, name, io, replay, repair, repairs);
            out.repairs = std::move(repairs);
            return out;
        } catch (const persist::journal_error& e) {
            const auto lost = std::to_string(e.records_lost) + " record" + (e.records_lost == 1 ? "" : "s") +
                              " (" + std::to_string(e.bytes_lost) + " bytes)";
            if (!repair)
                throw persist::persist_error(
                    std::string(e.what()) +
                    ". Refusing to start. Start ecsd with --repair to cut the journal there: "
                    "the " +
                    lost +
                    " from that offset on would be lost (a copy of the whole "
                    "journal is kept as " +
                    e.file.string() + ".damaged)");
            const auto copy = persist::keep_aside(e.file, /*copy=*/true);
            persist::truncate_journal(e.file, e.offset);
            const auto note = std::string(e.what()) + "; --repair: journal truncated at byte offset " +
                              std::to_string(e.offset) + ", " + lost +
                              " lost; the journal as found is kept as " + copy.string();
            spdlog::warn("{}", note);
            repairs.push_back(note);
        }
    }
}

void check_orphan_journals(const fs::path& dir, bool repair) {
    constexpr std::string_view suffix = ".journal";
    std::vector<fs::path> journals;
    for (const auto& entry : fs::directory_iterator(dir)) journals.push_back(entry.path());
    std::sort(journals.begin(), journals.end());
    for (const auto& path : journals) {
        const auto file = path.filename().string();
        if (file.size() <= suffix.size() || !file.ends_with(suffix) || file.front() == '.') continue;
        const auto name = file.substr(0, file.size() - suffix.size());
        if (protocol::world_name_problem(name)) continue;  // no world of ecsd's could have written it
        const auto snap = world_log::snapshot_path(dir, name);
        if (world_log::find_snapshot(dir, name)) continue;
        const auto bytes = fs::file_size(path);
        if (bytes == 0) {  // holds nothing (a world.create that failed to write its snapshot)
            fs::remove(path);
            spdlog::info("{}: removed an empty journal without a snapshot", path.string());
            continue;
        }
        const std::string text = read_file(path);
        const auto records = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
        const auto what = path.string() + ": journal of world '" + name + "' with " +
                          std::to_string(records) + " records (" + std::to_string(bytes) +
                          " bytes from byte offset 0) but no snapshot " + snap.string() +
                          ": the world cannot be rebuilt from its journal alone";
        if (!repair)
            throw persist::persist_error(
                what +
                ". Refusing to start. Restore the snapshot, or start ecsd with --repair "
                "to move the journal aside as " +
                path.string() + ".damaged: the world '" + name + "' and those records would be lost");
        const auto moved = persist::keep_aside(path, /*copy=*/false);
        spdlog::warn("{}; --repair: moved it aside as {}: the world '{}' and its {} records are lost", what,
                     moved.string(), name, records);
    }
}

}  // namespace ecsd::net
