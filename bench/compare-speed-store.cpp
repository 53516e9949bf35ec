// Builds the store bench/compare-speed times `kbench compare` on, through the
// ResultStore API, and reports how fast the samples went in.
//
//   compare-speed-store STORE_URL [CLASSES] [PROFILES] [SESSIONS] [REPEATS] [CLASSES_PER_BENCHMARK]
//
// Defaults: 10000 result classes (100 benchmarks x 100 classes), 3 swprofiles
// (base, same, changed), 2 sessions x 15 repeats = 30 samples per class and
// profile; a repeat of one benchmark (100 classes) is one transaction, and so is
// each benchmark's outcome ("ok") and each session's end. Values are normal
// with cv 1% and a small per-session offset; in
// `changed` every tenth class is 3% slower, so compare has something to mark.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sys/resource.h>
#include <string>
#include <vector>

#include "common/records.h"
#include "store/result_store.h"

namespace st = kbench::store;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s STORE_URL [CLASSES] [PROFILES] [SESSIONS] [REPEATS]\n", argv[0]);
    return 2;
  }
  const std::string url = argv[1];
  const int classes = argc > 2 ? std::atoi(argv[2]) : 10000;
  const int profiles = argc > 3 ? std::atoi(argv[3]) : 3;
  const int sessions = argc > 4 ? std::atoi(argv[4]) : 2;
  const int repeats = argc > 5 ? std::atoi(argv[5]) : 15;
  const int kClassesPerBenchmark = argc > 6 ? std::atoi(argv[6]) : 100;
  const int benchmarks = (classes + kClassesPerBenchmark - 1) / kClassesPerBenchmark;
  const std::vector<std::string> names = {"base", "same", "changed", "p3", "p4", "p5"};
  if (classes < 1 || profiles < 1 || profiles > static_cast<int>(names.size()) || sessions < 1 || repeats < 1 ||
      kClassesPerBenchmark < 1) {
    std::fprintf(stderr, "compare-speed-store: expected CLASSES >= 1, 1 <= PROFILES <= 6, SESSIONS >= 1, REPEATS >= 1\n");
    return 2;
  }

  std::mt19937_64 rng(20261130);
  std::normal_distribution<double> unit_normal(0.0, 1.0);
  std::vector<double> class_mean(classes);
  for (int c = 0; c < classes; ++c) class_mean[c] = 100.0 * (1 + c % 97);

  auto store = st::open_store(url, st::OpenMode::CreateIfMissing);
  st::SessionStart start;
  start.sut.name = "speed-sut";
  start.sut.hostname = "speed-sut";
  start.sut.arch = "x86_64";
  start.sut.cpu_model = "synthetic";
  start.sut.cpu_count = 2;
  start.sut.memory_gib = 8;
  start.fingerprint = {{"kernel_release", "synthetic"}};
  start.started_at = "2026-11-30T00:00:00Z";

  // Samples are generated before the clock starts: only the store is timed.
  struct Batch {
    std::int64_t session_slot;
    int benchmark;
    int repeat;
    std::vector<kbench::records::Sample> samples;
  };
  std::vector<Batch> batches;
  for (int p = 0; p < profiles; ++p) {
    for (int s = 0; s < sessions; ++s) {
      std::vector<double> boot_offset(classes);
      for (auto& offset : boot_offset) offset = 0.002 * unit_normal(rng);
      for (int b = 0; b < benchmarks; ++b) {
        for (int r = 0; r < repeats; ++r) {
          Batch batch{p * sessions + s, b, r, {}};
          for (int c = b * kClassesPerBenchmark; c < std::min(classes, (b + 1) * kClassesPerBenchmark); ++c) {
            const double shift = names[p] == "changed" && c % 10 == 0 ? 1.03 : 1.0;
            const double value = class_mean[c] * shift * (1 + boot_offset[c] + 0.01 * unit_normal(rng));
            batch.samples.push_back({"", {"metric-" + std::to_string(c), "ns", kbench::Better::Lower}, r, value});
          }
          batches.push_back(std::move(batch));
        }
      }
    }
  }

  // CPU time as well as wall time: a commit waits for one fsync
  // (synchronous = FULL, docs/resultstore.md), which the wall clock counts and
  // the CPU clock does not; on a shared VM the two tell different stories.
  auto cpu_seconds = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  };
  std::size_t total = 0;
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::int64_t> session_ids;
  for (int p = 0; p < profiles; ++p) {
    for (int s = 0; s < sessions; ++s) {
      start.swprofile = names[p];
      session_ids.push_back(store->begin_session(start));
    }
  }
  for (const auto& batch : batches) {
    const st::BenchmarkKey key{"speed/bench-" + std::to_string(batch.benchmark), {}};
    store->add_repeat(session_ids[batch.session_slot], key, batch.repeat, batch.samples);
    total += batch.samples.size();
    // A benchmark's last repeat: it ended "ok", as in a real run. compare
    // reads only settled benchmarks of finished sessions; without these it
    // finds no rows and fails (which an earlier version of this bench timed).
    if (batch.repeat == repeats - 1) store->record_outcome(session_ids[batch.session_slot], key, st::Outcome{});
  }
  for (const std::int64_t session : session_ids) store->finish_session(session);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  std::printf("ingest: %zu samples (%d result classes x %d swprofiles x %d sessions x %d repeats, "
              "%d classes per repeat = %zu transactions): wall %.2f s = %.0f samples/s, CPU %.2f s = %.0f samples/s\n",
              total, classes, profiles, sessions, repeats, kClassesPerBenchmark, batches.size(), seconds,
              total / seconds, cpu, total / cpu);
  return 0;
}
