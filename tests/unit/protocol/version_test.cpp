#include "ecsd/protocol/version.hpp"

#include <string>

#include <gtest/gtest.h>

TEST(Version, LineNamesProgramAndVersion) {
    EXPECT_EQ(std::string(ecsd::protocol::version_line("ecsd")),
              std::string("ecsd ") + ecsd::protocol::version);
}
