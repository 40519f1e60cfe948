// The server-wide output bound (--max-output-total) without sockets: what it counts, whom it drops.
#include "rpc/output_budget.hpp"

#include <atomic>
#include <cstddef>
#include <memory>

#include <gtest/gtest.h>

namespace ecsd::net {
namespace {

struct watched_account {
    std::shared_ptr<output_budget::account> account;
    int drops = 0;
};

// Watch backlogs that several connections share are memory once: the bound counts them once
// (through `shared`), and a connection's backlogs still weigh in full when the slowest is chosen.
TEST(OutputBudget, BacklogsThatConnectionsShareCountOnceTowardTheBound) {
    std::atomic<std::size_t> shared{0};
    output_budget budget(1000, [&] { return shared.load(); });
    watched_account a;
    watched_account b;
    a.account = budget.open([&] { ++a.drops; });
    b.account = budget.open([&] { ++b.drops; });

    // Both hold the same 600 bytes of diffs, and 100 of their own each.
    shared = 600;
    budget.update(*a.account, 100, 600, false);
    budget.update(*b.account, 100, 600, false);
    EXPECT_EQ(budget.total(), 800U) << "counted per connection it would be 1,400, past the bound";
    EXPECT_EQ(a.drops + b.drops, 0);
    EXPECT_EQ(budget.dropped(), 0U);

    // Past the bound: the one with more held (own and backlogs) goes first, and alone.
    shared = 900;
    budget.update(*a.account, 100, 900, false);
    budget.update(*b.account, 100, 600, false);
    EXPECT_EQ(budget.total(), 1100U);
    EXPECT_EQ(a.drops, 1);
    EXPECT_EQ(b.drops, 0);
    EXPECT_EQ(budget.dropped(), 1U);

    budget.close(a.account);
    shared = 600;
    EXPECT_EQ(budget.total(), 700U);
    budget.close(b.account);
    shared = 0;
    EXPECT_EQ(budget.total(), 0U);
}

}  // namespace
}  // namespace ecsd::net
