// Sessions as replicates: the shuffled order per session, the
// plan's order key, the pause between sessions, the state stored at a
// session's end, the microcode revision, and the run table's session words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

#include "app/session_report.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "runner/interrupt.h"
#include "runner/plan_executor.h"
#include "store/result_store.h"
#include "support/plan_errors.h"
#include "support/test_files.h"
#include "sysinfo/fingerprint.h"

namespace kbench {
namespace {

using ::testing::ElementsAre;

using testing::plan_error;

TEST(PlanOrder, ShuffledByDefaultListedOnRequest) {
  EXPECT_EQ(plan::parse_plan("benchmarks: [a/b]\n", "p.yaml").order, plan::Order::Shuffled);
  EXPECT_EQ(plan::parse_plan("order: shuffled\nbenchmarks: [a/b]\n", "p.yaml").order, plan::Order::Shuffled);
  EXPECT_EQ(plan::parse_plan("order: listed\nbenchmarks: [a/b]\n", "p.yaml").order, plan::Order::Listed);
}

TEST(PlanOrder, AnythingElseIsRefusedWithFileLineAndChoices) {
  EXPECT_EQ(plan_error("benchmarks: [a/b]\norder: random\n"), "p.yaml:2: order: expected listed or shuffled, got 'random'");
  EXPECT_EQ(plan_error("order: [listed]\nbenchmarks: [a/b]\n"), "p.yaml:1: order: expected a scalar value");
}

std::vector<std::size_t> sorted(std::vector<std::size_t> indices) {
  std::sort(indices.begin(), indices.end());
  return indices;
}

TEST(SessionOrder, IsAPermutationOfEveryBenchmark) {
  std::vector<std::size_t> all(24);
  std::iota(all.begin(), all.end(), 0);
  for (int session = 0; session < 10; ++session) {
    EXPECT_EQ(sorted(runner::session_order("run-1", session, 24, plan::Order::Shuffled)), all);
  }
  EXPECT_TRUE(runner::session_order("run-1", 0, 0, plan::Order::Shuffled).empty());
  EXPECT_THAT(runner::session_order("run-1", 3, 1, plan::Order::Shuffled), ElementsAre(0u));
}

// --resume recomputes the order from the run and the session: it must come
// out the same, whatever else happened in between.
TEST(SessionOrder, TheSameRunAndSessionGiveTheSameOrder) {
  const auto first = runner::session_order("2026-11-30T23:00:00Z-123", 2, 24, plan::Order::Shuffled);
  runner::session_order("another run", 2, 24, plan::Order::Shuffled);
  EXPECT_EQ(runner::session_order("2026-11-30T23:00:00Z-123", 2, 24, plan::Order::Shuffled), first);
}

TEST(SessionOrder, SessionsAndRunsGetDifferentOrders) {
  std::set<std::vector<std::size_t>> orders;
  for (int session = 0; session < 6; ++session) {
    orders.insert(runner::session_order("run-1", session, 24, plan::Order::Shuffled));
  }
  orders.insert(runner::session_order("run-2", 0, 24, plan::Order::Shuffled));
  // 24! orders: seven draws that collide would mean the seed is ignored.
  EXPECT_EQ(orders.size(), 7u);
  std::vector<std::size_t> listed(24);
  std::iota(listed.begin(), listed.end(), 0);
  EXPECT_EQ(orders.count(listed), 0u) << "the listed order came out of a shuffle";
}

TEST(SessionOrder, ListedKeepsThePlansOrder) {
  EXPECT_THAT(runner::session_order("run-1", 4, 4, plan::Order::Listed), ElementsAre(0u, 1u, 2u, 3u));
}

TEST(RoundOrder, TwoSwprofilesSwapEveryRound) {
  EXPECT_THAT(runner::round_order(0, 2), ElementsAre(0u, 1u));
  EXPECT_THAT(runner::round_order(1, 2), ElementsAre(1u, 0u));
  EXPECT_THAT(runner::round_order(2, 2), ElementsAre(0u, 1u));
  EXPECT_THAT(runner::round_order(0, 1), ElementsAre(0u));
  EXPECT_THAT(runner::round_order(5, 1), ElementsAre(0u));
  EXPECT_TRUE(runner::round_order(3, 0).empty());
}

// Over one full cycle of rows (n rounds for an even n, 2n for an odd one):
// every swprofile is in every position equally often, and right after each
// other swprofile equally often (a Williams design). The first round is
// the plan's listed order.
TEST(RoundOrder, AFullCycleBalancesPositionsAndPredecessors) {
  for (std::size_t n = 2; n <= 7; ++n) {
    const int rows = n % 2 == 0 ? static_cast<int>(n) : 2 * static_cast<int>(n);
    std::vector<std::size_t> listed(n);
    std::iota(listed.begin(), listed.end(), 0);
    EXPECT_EQ(runner::round_order(0, n), listed) << n << " swprofiles";
    std::map<std::pair<std::size_t, std::size_t>, int> at_position, after;
    for (int round = 0; round < rows; ++round) {
      const auto order = runner::round_order(round, n);
      ASSERT_EQ(sorted(order), listed) << "round " << round << " of " << n;
      for (std::size_t j = 0; j < n; ++j) {
        ++at_position[{order[j], j}];
        if (j > 0) ++after[{order[j - 1], order[j]}];
      }
      EXPECT_EQ(runner::round_order(round + rows, n), order) << "the rows repeat after a cycle";
    }
    const int per_position = rows / static_cast<int>(n);
    const int per_pair = rows / static_cast<int>(n);
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = 0; b < n; ++b) {
        EXPECT_EQ(at_position[std::make_pair(a, b)], per_position) << n << " swprofiles: " << a << " at position " << b;
        if (a != b) {
          EXPECT_EQ(after[std::make_pair(a, b)], per_pair) << n << " swprofiles: " << b << " right after " << a;
        }
      }
    }
  }
}

// The interrupt flag and the handlers are the process's, and a run stops for
// good once they are set: the signal is raised in a child process, so that
// the tests after this one in the same process (the whole binary run at
// once, or shuffled) start uninterrupted.
TEST(SessionGap, AnInterruptEndsThePauseAtOnce) {
  EXPECT_EXIT(
      {
        runner::install_interrupt_handlers();
        std::raise(SIGINT);
        // Without the check this would sleep an hour and the test would time out.
        const bool slept = runner::sleep_unless_interrupted(std::chrono::hours(1));
        std::fprintf(stderr, "slept %s, signal %d\n", slept ? "to the end" : "not", runner::interrupt_signal());
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "slept not, signal " + std::to_string(SIGINT));
}

TEST(SessionGap, ZeroDoesNotWait) {
  ASSERT_FALSE(runner::interrupted()) << "an earlier test left this process interrupted";
  EXPECT_TRUE(runner::sleep_unless_interrupted(std::chrono::milliseconds(0)));
}

TEST(Microcode, FirstCpusRevisionOrNull) {
  const std::string x86 =
      "processor\t: 0\nvendor_id\t: GenuineIntel\nmicrocode\t: 0xf0\ncpu MHz\t\t: 2000.000\n\n"
      "processor\t: 1\nvendor_id\t: GenuineIntel\nmicrocode\t: 0xf4\n";
  EXPECT_EQ(sysinfo::microcode_from_cpuinfo(x86), "0xf0");
  const std::string arm64 = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
  EXPECT_TRUE(sysinfo::microcode_from_cpuinfo(arm64).is_null());
  EXPECT_TRUE(sysinfo::fingerprint().contains("microcode"));
}

store::SessionStart session_start() {
  store::SessionStart start;
  start.sut = {"lab-1", "lab-1.example", "x86_64", "Test CPU", 2, 8, "VM"};
  start.swprofile = "base";
  start.fingerprint = {{"kernel_release", "6.1.0-test"}, {"loadavg", {0.1, 0.2, 0.3}}};
  start.started_at = "2026-11-30T12:00:00Z";
  return start;
}

TEST(SessionEnd, FinishStoresTheStateAtTheEndInTheFingerprint) {
  testing::TempDir dir;
  const std::string url = "sqlite://" + (dir.path() / "store.db").string();
  std::int64_t id = 0;
  {
    auto store = store::open_store(url, store::OpenMode::CreateIfMissing);
    id = store->begin_session(session_start());
    store->finish_session(id, {{"loadavg_end", {1.5, 0.7, 0.25}}});
  }
  auto store = store::open_store(url, store::OpenMode::ReadOnly);
  const auto session = store->session(id);
  ASSERT_TRUE(session);
  EXPECT_TRUE(session->finished);
  EXPECT_EQ(session->fingerprint.at("loadavg_end"), nlohmann::json({1.5, 0.7, 0.25}));
  // The start's keys stay as they were.
  EXPECT_EQ(session->fingerprint.at("loadavg"), nlohmann::json({0.1, 0.2, 0.3}));
  EXPECT_EQ(session->fingerprint.at("kernel_release"), "6.1.0-test");
}

TEST(SessionEnd, AnUnknownLoadIsStoredAsNull) {
  testing::TempDir dir;
  auto store = store::open_store("sqlite://" + (dir.path() / "store.db").string(), store::OpenMode::CreateIfMissing);
  const auto id = store->begin_session(session_start());
  store->finish_session(id, {{"loadavg_end", nullptr}});
  const auto session = store->session(id);
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->fingerprint.contains("loadavg_end"));
  EXPECT_TRUE(session->fingerprint.at("loadavg_end").is_null());
}

TEST(RunTable, NamesTheSessionsItCovers) {
  EXPECT_EQ(app::describe_session_numbers({3}), "session 3");
  EXPECT_EQ(app::describe_session_numbers({6, 4, 5}), "sessions 4 to 6");
  EXPECT_EQ(app::describe_session_numbers({1, 3, 5}), "sessions 1, 3 and 5");
}

}  // namespace
}  // namespace kbench
