// A full disk against the real ecsd, on a small tmpfs and on a small loop-mounted ext4: a write
// that cannot be journaled is answered storage_error and not applied (entities in memory equal the
// acknowledged ones), the journal keeps no partial record, and once space returns every
// acknowledged id names the same entity after a restart, and nothing else exists. A world.create
// on the full disk is refused storage_error and creates nothing. Both with --appendfsync always and
// with the default (everysec).
//
// Mounting needs root (CI runs as root); a mount that fails fails the test, it is not skipped.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

namespace fs = std::filesystem;

/// @brief Runs a shell command; returns its exit status and output.
std::pair<int, std::string> shell(const std::string& command) {
    std::string out;
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    if (!p) return {-1, "popen failed"};
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    return {::pclose(p), out};
}

/// @brief A small file system mounted on a fresh folder, unmounted and removed when destroyed
/// (also when the test fails halfway).
class small_mount {
  public:
    enum class kind { tmpfs, ext4 };
    small_mount(kind k, const fs::path& dir) : dir_(dir) {
        fs::create_directories(dir_);
        std::string command;
        if (k == kind::tmpfs) {
            command = "mount -t tmpfs -o size=1m tmpfs " + dir_.string();
        } else {
            image_ = dir_.string() + ".img";
            fs::remove(image_);
            { std::ofstream(image_, std::ios::binary); }
            fs::resize_file(image_, 8 * 1024 * 1024);
            const auto [rc, out] = shell("mkfs.ext4 -q -F " + image_.string());
            if (rc != 0) throw std::runtime_error("mkfs.ext4 failed (is e2fsprogs installed?): " + out);
            command = "mount -o loop " + image_.string() + " " + dir_.string();
        }
        const auto [rc, out] = shell(command);
        if (rc != 0)
            throw std::runtime_error("`" + command + "` failed (these tests need root and mount): " + out);
        mounted_ = true;
    }
    ~small_mount() {
        if (mounted_) {
            const auto [rc, out] = shell("umount " + dir_.string());
            if (rc != 0) (void)shell("umount -l " + dir_.string());
        }
        std::error_code ec;
        fs::remove_all(dir_, ec);
        if (!image_.empty()) fs::remove(image_, ec);
    }
    small_mount(const small_mount&) = delete;
    small_mount& operator=(const small_mount&) = delete;

  private:
    fs::path dir_;
    fs::path image_;
    bool mounted_ = false;
};

/// @brief Fills the file system holding `path` to the last byte, then frees `keep` bytes of it.
void fill_disk(const fs::path& path, std::size_t keep) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    const std::string chunk(4096, 'f');
    std::size_t written = 0;
    for (;;) {
        const auto n = ::write(fd, chunk.data(), chunk.size());
        if (n <= 0) {
            ASSERT_EQ(errno, ENOSPC);
            break;
        }
        written += static_cast<std::size_t>(n);
    }
    ::fsync(fd);
    ASSERT_GT(written, keep);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(written - keep)), 0);
    ::fsync(fd);
    ::close(fd);
}

/// @brief Takes whatever space is left on the file system holding `path`, to the last byte (a
/// refused write may have given some back, and ext4 then fits a small file in a freed block).
void top_up(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    for (const std::size_t size : {std::size_t{4096}, std::size_t{1}}) {
        const std::string chunk(size, 't');
        while (::write(fd, chunk.data(), chunk.size()) > 0) {
        }
        ASSERT_EQ(errno, ENOSPC);
    }
    ::fsync(fd);
    ::close(fd);
}

struct figures {
    std::size_t acknowledged_before_full = 0;
    std::size_t refused = 0;
    std::size_t in_memory_when_full = 0;
    std::size_t acknowledged_total = 0;
    std::size_t after_restart = 0;
    bool ids_stable = false;
};

/// @brief Whether world.list names `world`.
bool listed(line_client& c, const std::string& world) {
    const auto worlds = c.result("world.list")["worlds"];
    return std::find(worlds.begin(), worlds.end(), world) != worlds.end();
}

/// @brief One episode: fill the disk while spawning, check what is refused, free the space, spawn
/// more, kill -9 and restart. `appendfsync` empty: ecsd's default policy (everysec).
figures disk_full_episode(small_mount::kind k, const std::string& label, const std::string& appendfsync) {
    figures f;
    const auto dir =
        fs::temp_directory_path() / ("ecsd_disk_full_" + label + "_" + std::to_string(::getpid()));
    std::unique_ptr<small_mount> mount;
    try {
        mount = std::make_unique<small_mount>(k, dir);
    } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        return f;
    }
    std::vector<std::string> args{"--data-dir", dir.string(), "--autosave", "0"};
    if (!appendfsync.empty()) args.insert(args.end(), {"--appendfsync", appendfsync});
    const std::string blob(1000, 'b');
    std::map<std::uint64_t, int> acknowledged;  // id -> the i it was spawned with
    const auto spawn = [&](line_client& c, int i) {
        const auto r =
            c.call("world.spawn_entity",
                   {{"components", {{"Position", {{"x", i}, {"y", 0}}}, {"Blob", {{"s", blob}}}}}});
        if (r.contains("result")) acknowledged[r["result"]["entity"].get<std::uint64_t>()] = i;
        return r;
    };
    {
        ecsd_server server(args);
        line_client c(server.port());
        (void)c.result("world.register_component", {{"name", "Blob"}, {"fields", {{"s", ""}}}});
        fill_disk(dir / "filler", 96 * 1024);

        int i = 0;
        for (; i < 2000 && f.refused == 0; ++i) {
            const auto r = spawn(c, i);
            if (reason_of(r) == "storage_error") {
                ++f.refused;
                const std::string message = r["error"]["message"];
                EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
                EXPECT_NE(message.find((dir / "default.journal").string()), std::string::npos) << message;
            } else {
                EXPECT_TRUE(r.contains("result")) << r.dump();
            }
        }
        EXPECT_EQ(f.refused, 1u) << "the disk never filled up";
        f.acknowledged_before_full = acknowledged.size();
        for (int more = 0; more < 20; ++more, ++i) {
            const auto r = spawn(c, i);
            if (!r.contains("result")) {
                EXPECT_EQ(reason_of(r), "storage_error") << r.dump();  // never internal
                ++f.refused;
            }
        }
        f.in_memory_when_full = c.result("world.info")["entities"].get<std::size_t>();
        EXPECT_EQ(f.in_memory_when_full, acknowledged.size()) << "a refused write stayed applied in memory";

        // A snapshot does not fit either: storage_error naming the file, no temp file left behind.
        top_up(dir / "filler");
        const auto save = c.call("world.save");
        EXPECT_EQ(reason_of(save), "storage_error") << save.dump();
        EXPECT_NE(save.dump().find("No space left on device"), std::string::npos) << save.dump();
        EXPECT_FALSE(fs::exists(dir / ".default.snapshot.tmp"));
        EXPECT_FALSE(fs::exists(dir / ".default.snapshot.json.tmp"));
        // Nor does a new world's first snapshot: storage_error, and no world (nor file) is created.
        const auto create = c.call("world.create", {{"world", "extra"}});
        EXPECT_EQ(reason_of(create), "storage_error") << create.dump();
        EXPECT_NE(create.dump().find("No space left on device"), std::string::npos) << create.dump();
        EXPECT_FALSE(listed(c, "extra")) << "a world.create refused for a full disk created the world";
        EXPECT_EQ(reason_of(c.call("world.info", {{"world", "extra"}})), "no_such_world");
        for (const auto* name : {"extra.snapshot", "extra.snapshot.json", "extra.journal",
                                 ".extra.snapshot.tmp", ".extra.snapshot.json.tmp"})
            EXPECT_FALSE(fs::exists(dir / name)) << name << " left behind by the refused world.create";

        fs::remove(dir / "filler");  // space comes back
        for (int more = 0; more < 50; ++more, ++i) {
            const auto r = spawn(c, i);
            EXPECT_TRUE(r.contains("result")) << "after freeing space: " << r.dump();
        }
        f.acknowledged_total = acknowledged.size();
        EXPECT_EQ(c.result("world.info")["entities"].get<std::size_t>(), acknowledged.size());
        // With space back, the same world.create succeeds.
        const auto again = c.call("world.create", {{"world", "extra"}});
        EXPECT_TRUE(again.contains("result")) << "after freeing space: " << again.dump();
        server.stop(SIGKILL);  // no final save: the restart replays the journal written across the episode
    }
    ecsd_server server(args);
    line_client c(server.port());
    EXPECT_TRUE(listed(c, "extra")) << "the world created once space returned was lost";
    const auto rows = c.result("world.query", {{"query", "Blob"}, {"limit", 10000}})["entities"];
    f.after_restart = rows.size();
    EXPECT_EQ(c.result("world.info")["entities"].get<std::size_t>(), acknowledged.size());
    std::size_t same = 0;
    for (const auto& row : rows) {
        const auto id = row["entity"].get<std::uint64_t>();
        const auto it = acknowledged.find(id);
        if (it == acknowledged.end()) {
            ADD_FAILURE() << "entity " << id << " exists but was never acknowledged";
            continue;
        }
        const auto& comps = row["components"];
        if (comps["Position"]["x"] == static_cast<double>(it->second) && comps["Blob"]["s"] == blob)
            ++same;
        else
            ADD_FAILURE() << "entity " << id << " holds other data: " << comps["Position"].dump();
    }
    f.ids_stable = same == acknowledged.size() && rows.size() == acknowledged.size();
    EXPECT_TRUE(f.ids_stable) << same << " of " << acknowledged.size()
                              << " acknowledged ids hold their own data";
    std::cout << "[ disk full on " << label << " ] acknowledged before full " << f.acknowledged_before_full
              << ", refused " << f.refused << ", in memory when full " << f.in_memory_when_full
              << ", acknowledged in total " << f.acknowledged_total << ", after restart " << f.after_restart
              << ", ids stable: " << (f.ids_stable ? "yes" : "no") << "\n";
    return f;
}

TEST(DiskFull, OnTmpfsRefusedWritesAreNotAppliedAndIdsSurviveARestart) {
    (void)disk_full_episode(small_mount::kind::tmpfs, "tmpfs", "always");
}

TEST(DiskFull, OnExt4RefusedWritesAreNotAppliedAndIdsSurviveARestart) {
    (void)disk_full_episode(small_mount::kind::ext4, "ext4", "always");
}

// The default policy: records reach the file (not yet the disk) before each answer, so a full disk
// is seen at the same write, and a kill -9 afterwards loses nothing acknowledged.
TEST(DiskFull, WithTheDefaultEverysecPolicyOnTmpfsIdsAreStableAndNothingAcknowledgedIsLost) {
    const auto f = disk_full_episode(small_mount::kind::tmpfs, "tmpfs_everysec", "");
    EXPECT_GT(f.acknowledged_before_full, 0u);
    EXPECT_EQ(f.after_restart, f.acknowledged_total);
    EXPECT_TRUE(f.ids_stable);
}

}  // namespace
}  // namespace ecsd::test
