// Ingest and read speed of the SQLite resultstore at the size of the
// compare-speed goal: 10,000 result classes x 3 swprofiles x 30 repeats.
//
// Prints samples/s for add_repeat (wall and CPU time, because the machine is
// shared) next to a reference in the same process: the same rows inserted by
// bare SQLite into a one-table file with one prepared statement and the same
// commits, so the ratio shows what the store's bookkeeping costs. Then the
// time samples() takes to return all of them.
//
// With POSTGRES_URL (an empty database, e.g. one created on the server of
// scripts/pg-test-server.sh), the same ingest and read run against the
// PostgreSQL store too, printed next to the SQLite figures (its CPU time is
// kbench's only; the server's is not counted).
//
// Usage: store-ingest [DIR] [CLASSES_PER_REPEAT] [POSTGRES_URL]   (defaults: $TMPDIR or /tmp, 10000)
#include <sqlite3.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "store/result_store.h"

namespace {

using namespace kbench;
namespace fs = std::filesystem;

constexpr int kTotalClasses = 10000;
constexpr int kProfiles = 3;
constexpr int kRepeats = 30;

struct Clock {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = cpu_seconds();
  static double cpu_seconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  }
  double wall_elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  }
  double cpu_elapsed() const { return cpu_seconds() - cpu; }
};

void remove_store(const fs::path& file) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(file.string() + suffix);
}

void check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE) {
    std::fprintf(stderr, "reference: %s: %s\n", what, sqlite3_errmsg(db));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* tmp = std::getenv("TMPDIR");
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::path(tmp && *tmp ? tmp : "/tmp");
  const int per_repeat = argc > 2 ? std::atoi(argv[2]) : kTotalClasses;
  if (per_repeat <= 0 || kTotalClasses % per_repeat != 0) {
    std::fprintf(stderr, "CLASSES_PER_REPEAT must divide %d\n", kTotalClasses);
    return 2;
  }
  const int benchmarks = kTotalClasses / per_repeat;
  const fs::path store_file = dir / "kbench-store-ingest.db";
  const fs::path reference_file = dir / "kbench-store-ingest-reference.db";
  remove_store(store_file);
  remove_store(reference_file);

  std::vector<records::Sample> repeat_samples;
  for (int c = 0; c < per_repeat; ++c) {
    repeat_samples.push_back(
        records::Sample{"", ResultClass{"metric-" + std::to_string(c) + ": p:1, d:10", "ns", Better::Lower}, 0, 1.0 + c});
  }
  const long total = static_cast<long>(kProfiles) * benchmarks * kRepeats * per_repeat;

  // The store.
  auto ingest_into = [&](const std::string& url) {
    auto store = store::open_store(url, store::OpenMode::CreateIfMissing);
    for (int p = 0; p < kProfiles; ++p) {
      store::SessionStart start;
      start.sut.name = "lab";
      start.swprofile = "profile-" + std::to_string(p);
      const auto session = store->begin_session(start);
      for (int b = 0; b < benchmarks; ++b) {
        const store::BenchmarkKey key{"suite/bench-" + std::to_string(b), {{"loops", "1000"}}};
        for (int r = 0; r < kRepeats; ++r) store->add_repeat(session, key, r, repeat_samples);
      }
    }
  };
  Clock ingest;
  ingest_into(store_file.string());
  const double store_wall = ingest.wall_elapsed(), store_cpu = ingest.cpu_elapsed();

  // The reference: bare inserts, same journal settings and commits.
  Clock reference;
  {
    sqlite3* db = nullptr;
    check(sqlite3_open(reference_file.c_str(), &db), db, "open");
    check(sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; "
                           "CREATE TABLE r(session INTEGER, class INTEGER, repeat INTEGER, value REAL)",
                       nullptr, nullptr, nullptr), db, "schema");
    sqlite3_stmt* insert = nullptr;
    check(sqlite3_prepare_v2(db, "INSERT INTO r VALUES (?1, ?2, ?3, ?4)", -1, &insert, nullptr), db, "prepare");
    for (int p = 0; p < kProfiles; ++p) {
      for (int b = 0; b < benchmarks; ++b) {
        for (int r = 0; r < kRepeats; ++r) {
          check(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), db, "begin");
          for (int c = 0; c < per_repeat; ++c) {
            sqlite3_bind_int(insert, 1, p);
            sqlite3_bind_int(insert, 2, b * per_repeat + c);
            sqlite3_bind_int(insert, 3, r);
            sqlite3_bind_double(insert, 4, repeat_samples[c].value);
            check(sqlite3_step(insert), db, "insert");
            sqlite3_reset(insert);
          }
          check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), db, "commit");
        }
      }
    }
    sqlite3_finalize(insert);
    sqlite3_close(db);
  }
  const double reference_wall = reference.wall_elapsed(), reference_cpu = reference.cpu_elapsed();

  Clock read;
  std::size_t rows = 0;
  {
    auto store = store::open_store(store_file.string(), store::OpenMode::MustExist);
    rows = store->samples(store::SampleQuery{}).size();
  }
  const double read_wall = read.wall_elapsed(), read_cpu = read.cpu_elapsed();

  if (argc > 3) {
    const std::string postgres = argv[3];
    Clock pg_ingest;
    ingest_into(postgres);
    const double pg_wall = pg_ingest.wall_elapsed(), pg_cpu = pg_ingest.cpu_elapsed();
    Clock pg_read;
    const std::size_t pg_rows = store::open_store(postgres, store::OpenMode::ReadOnly)->samples(store::SampleQuery{}).size();
    const double pg_read_wall = pg_read.wall_elapsed();
    std::printf("postgresql ingest: %9.0f samples/s wall, %9.0f samples/s kbench CPU (sqlite: %.0f wall; ratio %.2f)\n",
                total / pg_wall, total / pg_cpu, total / store_wall, pg_wall / store_wall);
    std::printf("postgresql samples(): %zu rows in %.2f s wall (sqlite: %.2f s; ratio %.2f)\n", pg_rows, pg_read_wall,
                read_wall, pg_read_wall / read_wall);
    if (pg_rows != static_cast<std::size_t>(total)) return 1;
  }
  std::printf("samples: %ld (%d per repeat, one transaction per repeat)\n", total, per_repeat);
  std::printf("store ingest:     %9.0f samples/s wall, %9.0f samples/s CPU\n", total / store_wall,
              total / store_cpu);
  std::printf("bare SQLite ref.: %9.0f samples/s wall, %9.0f samples/s CPU\n", total / reference_wall,
              total / reference_cpu);
  std::printf("store / reference speed: %.2f (wall), %.2f (CPU)\n", reference_wall / store_wall,
              reference_cpu / store_cpu);
  std::printf("samples(): %zu rows in %.2f s wall, %.2f s CPU\n", rows, read_wall, read_cpu);
  remove_store(store_file);
  remove_store(reference_file);
  return rows == static_cast<std::size_t>(total) ? 0 : 1;
}
