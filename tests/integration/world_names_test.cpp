// Critical (issue 21): world names used to escape --data-dir. Every name a request takes is
// checked; nothing is created, truncated or deleted outside the data folder.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

namespace fs = std::filesystem;

struct temp_tree {
    fs::path root = fs::temp_directory_path() / ("ecsd_names_" + std::to_string(::getpid()));
    fs::path data = root / "data";
    temp_tree() {
        fs::remove_all(root);
        fs::create_directories(data);
    }
    ~temp_tree() { fs::remove_all(root); }
    [[nodiscard]] std::size_t files_outside_data() const {
        std::size_t n = 0;
        for (const auto& e : fs::recursive_directory_iterator(root))
            if (e.is_regular_file() && e.path().parent_path() != data) ++n;
        return n;
    }
};

TEST(WorldNames, NamesThatWouldEscapeTheDataFolderAreRefusedEverywhere) {
    temp_tree t;
    const auto victim = t.root / "victim.snapshot";
    { std::ofstream(victim) << "precious"; }
    ecsd_server server({"--data-dir", t.data.string()});
    line_client c(server.port());
    const std::string abs = (t.root / "abs").string();
    const std::vector<std::string> bad{
        "../victim", abs, "a/b", std::string("a\0b", 3), ".hidden", std::string(65, 'n'), "", "..", "a b"};
    for (const auto& name : bad) {
        for (const char* method :
             {"world.create", "world.destroy", "world.save", "world.load", "world.info", "world.step"}) {
            const auto r = c.call(method, {{"world", name}});
            EXPECT_EQ(reason_of(r), "invalid_params")
                << method << " " << json(name).dump() << " -> " << r.dump();
        }
    }
    EXPECT_EQ(c.call("world.create", {{"world", "a/b"}})["error"]["message"].get<std::string>().rfind(
                  "params.world:", 0),
              0U);
    // Nothing was written, truncated or removed outside the data folder.
    std::ifstream in(victim);
    std::string text;
    std::getline(in, text);
    EXPECT_EQ(text, "precious");
    EXPECT_EQ(t.files_outside_data(), 1U) << "only the victim file may be outside data/";
    // Good names still work, with dots and dashes.
    EXPECT_TRUE(c.result("world.create", {{"world", "zone-1.north"}}).is_object());
    EXPECT_TRUE(fs::exists(t.data / "zone-1.north.snapshot"));
}

TEST(WorldNames, StartUpSkipsFilesWhoseNamesNoWorldCouldHave) {
    temp_tree t;
    { std::ofstream(t.data / "bad name.snapshot.json") << "{}"; }
    { std::ofstream(t.data / "bad name.journal") << "x\n"; }
    ecsd_server server({"--data-dir", t.data.string()});
    line_client c(server.port());
    EXPECT_EQ(c.result("world.list")["worlds"], json({"default"}));
}

}  // namespace
}  // namespace ecsd::test
