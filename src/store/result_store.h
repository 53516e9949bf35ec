#pragma once
// The resultstore: where samples and their metadata live. Addressed by URL:
// sqlite:///path/to/file.db (default) or postgresql://user@host:port/database.
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/params.h"
#include "common/records.h"
#include "common/result_class.h"

namespace kbench::store {

// The schema version this build reads and writes. A store with a higher
// version is refused (InputError), never rewritten.
inline constexpr int kSchemaVersion = 6;

// Identity of a system under test. Two sessions belong to the same SUT when
// all of these agree. memory_gib is MemTotal rounded to whole GiB, because
// MemTotal moves by megabytes between kernels on the same machine.
struct Sut {
  std::string name;  // user-chosen label, hostname by default
  std::string hostname;
  std::string arch;
  std::string cpu_model;
  int cpu_count = 0;
  std::int64_t memory_gib = 0;
  std::string product_name;
};

struct BenchmarkKey {
  std::string name;  // suite/name
  Params params;     // effective parameters
};

struct SessionStart {
  Sut sut;
  std::string swprofile;
  nlohmann::json fingerprint;  // the agent's whole fingerprint record "data"
  std::string started_at;      // ISO 8601 UTC
  // What the session is to run: a benchmark in here without an outcome is
  // what an unfinished session lacks.
  std::vector<BenchmarkKey> planned;
  std::string uid;      // empty: the store makes a random 32-hex-digit one
};

enum class OutcomeStatus { Ok, Skipped, Failed };

// "ok", "skipped", "failed" (the words stored in the outcome table).
std::string_view to_string(OutcomeStatus status);
std::optional<OutcomeStatus> parse_outcome_status(std::string_view text);

struct Outcome {
  OutcomeStatus status = OutcomeStatus::Ok;
  std::string reason;       // skip or failure reason; ok: where the run was, if its connection says (lava: its job)
  std::string stderr_tail;  // last lines of the agent's stderr on failure
};

struct SampleRow {
  std::string sut;
  std::string swprofile;
  std::int64_t session = 0;
  int session_index = 0;  // 0-based order of the session within (sut, swprofile)
  int session_number() const { return session_index + 1; }
  std::string benchmark;
  ResultClass result_class;
  int repeat = 0;
  double value = 0;
  Params params;  // the benchmark's effective parameters (one name may run with several)
  std::string sut_class;
};

struct SampleQuery {
  std::vector<std::string> swprofiles;  // empty: all
  std::string sut_glob = "*";
  std::string benchmark_glob = "*";
  std::string resultclass_glob = "*";  // matched against the label "name (unit)"
  // Only samples of benchmarks whose outcome in their session is "ok": what
  // compare, show and noise use, so the repeats of an interrupted or failed
  // benchmark never feed an analysis. Export takes everything.
  bool settled_only = false;
  std::string class_glob = "*";  // matched against the session's sut_class
};

struct SutListing {
  Sut sut;
  int sessions = 0;
};
struct SwprofileListing {
  std::string name;
  std::string kernel_release;  // of the newest session
  std::vector<std::string> suts;
  int sessions = 0;
  std::int64_t samples = 0;
};
struct BenchmarkListing {
  std::string name;
  std::vector<ResultClass> result_classes;
  std::int64_t samples = 0;
};
// A benchmark a session lacks: planned but without an outcome. With
// repeats_stored > 0 it was interrupted part-way (those repeats are not used).
struct SessionGap {
  std::string benchmark;
  Params params;
  int repeats_stored = 0;
};
struct SessionListing {
  std::int64_t id = 0;  // the store's row id (stable, unique in the store)
  std::string sut;
  std::string swprofile;
  int session_index = 0;  // 0-based order within (sut, swprofile)
  std::string started_at;
  std::string kernel_release;
  bool finished = false;         // the run got to its end (not killed, not interrupted)
  std::vector<SessionGap> gaps;  // planned or begun benchmarks without an outcome
  std::int64_t samples = 0;
  nlohmann::json fingerprint;  // filled by session() only
  std::string uid;
  std::string sut_class;

  // The number users see: "session 2 of base on host". 1-based.
  int number() const { return session_index + 1; }
  bool complete() const { return finished && gaps.empty(); }
};
// One benchmark of one session, for `kbench session show`.
struct SessionBenchmark {
  std::string benchmark;
  Params params;
  std::optional<Outcome> outcome;
  int repeats = 0;
  std::int64_t samples = 0;
};
struct OutcomeListing {
  std::string sut;
  std::string swprofile;
  std::int64_t session = 0;
  int session_number = 0;  // 1-based within (sut, swprofile)
  std::string benchmark;
  Outcome outcome;
};

// One boot of an ssh SUT into a swprofile's kernel (sut.boot), measured or
// not: `kbench list boots` shows them, --resume skips the failed ones.
struct BootRecord {
  std::int64_t id = 0;
  std::string sut;  // the plan's SUT name, else the ssh target
  std::string swprofile;
  std::string plan_key;
  std::string run;
  int plan_session = 0;  // 0-based session of the plan this boot was for
  int number = 0;        // 1-based within the plan execution
  std::string method;    // kexec | reboot | default (back to the SUT's own kernel)
  std::string started_at;
  double seconds = 0;  // from the boot command to ssh answering from the new boot
  bool ok = false;
  bool power_cycled = false;
  std::string release;  // what the SUT ran after it
  std::string reason;   // why it failed
  std::string console_tail;
  std::optional<std::int64_t> session;  // the session measured in this boot
};

// A text kept in the store beside the samples: the log of a `kbench bisect`
// (kind "bisect", name "<good>..<bad>"), shown by `kbench log`.
struct StoredLog {
  std::int64_t id;
  std::string kind;
  std::string name;
  std::string created_utc;  // ISO 8601 UTC to the second, as utc_now_iso8601()
  std::string text;
};

// A benchmark's kernel profile in one session (schema version 6).
struct StoredKernelProfile {
  std::int64_t session = 0;
  BenchmarkKey benchmark;
  records::KernelProfile profile;  // profile.benchmark is the benchmark's name
};

// Everything a session holds, so `kbench merge` moves it whole between stores.
struct StoredResult {
  BenchmarkKey benchmark;
  ResultClass result_class;
  int repeat = 0;
  double value = 0;
  std::int64_t recorded_at = 0;  // unix seconds, as stored
};
struct StoredOutcome {
  BenchmarkKey benchmark;
  Outcome outcome;
  std::int64_t recorded_at = 0;
};
struct SessionContent {
  std::string uid;
  Sut sut;
  std::string swprofile;
  int session_index = 0;  // in the store it was read from
  std::string started_at;
  std::string kernel_release;
  std::optional<std::string> finished_at;  // nullopt: unfinished
  nlohmann::json fingerprint;
  std::optional<std::vector<BenchmarkKey>> planned;  // nullopt: a version-1 session (no plan stored)
  std::vector<StoredOutcome> outcomes;               // ordered by benchmark name, params
  std::vector<StoredResult> results;                 // ordered by benchmark name, params, class name, unit, repeat
  std::vector<StoredKernelProfile> kernel_profiles;  // ordered by benchmark name, params (session: the source's)
};

class ResultStore {
 public:
  virtual ~ResultStore() = default;

  // Creates the SUT and swprofile rows when new; every call is a new session.
  virtual std::int64_t begin_session(const SessionStart& start) = 0;
  // All samples of one repeat in one transaction: a killed run loses at most
  // the repeat in flight.
  virtual void add_repeat(std::int64_t session, const BenchmarkKey& benchmark, int repeat,
                          const std::vector<records::Sample>& samples) = 0;
  // How a benchmark ended in a session (ok, skipped with reason, failed).
  virtual void record_outcome(std::int64_t session, const BenchmarkKey& benchmark,
                              const Outcome& outcome) = 0;

  virtual std::vector<SutListing> list_suts(const std::string& glob) = 0;
  virtual std::vector<SwprofileListing> list_swprofiles(const std::string& glob) = 0;
  virtual std::vector<BenchmarkListing> list_benchmarks(const std::string& glob) = 0;
  virtual std::vector<OutcomeListing> list_outcomes(const std::vector<std::string>& swprofiles,
                                                    OutcomeStatus status) = 0;
  virtual bool has_swprofile(const std::string& name) = 0;

  virtual std::vector<SampleRow> samples(const SampleQuery& query) = 0;

  // --- export, resume and integrity ---

  // Streams the samples samples() would return, without holding them all in
  // memory; `kbench export` is for_each_sample(SampleQuery{}, ...).
  virtual void for_each_sample(const SampleQuery& query,
                               const std::function<void(const SampleRow&)>& sink) = 0;
  // Sessions of the named swprofiles (empty: all), oldest first.
  virtual std::vector<SessionListing> list_sessions(const std::vector<std::string>& swprofiles) = 0;
  // Repeat numbers of `benchmark` already committed in `session`, ascending.
  virtual std::vector<int> stored_repeats(std::int64_t session, const BenchmarkKey& benchmark) = 0;
  // The recorded outcome of `benchmark` in `session`, if any.
  virtual std::optional<Outcome> outcome_of(std::int64_t session, const BenchmarkKey& benchmark) = 0;
  // The "plan" object of the fingerprint of the newest session whose plan
  // key (`plan.key`) is `plan_key` among the named swprofiles (--resume).
  virtual std::optional<nlohmann::json> latest_plan(const std::string& plan_key,
                                                    const std::vector<std::string>& swprofiles) = 0;
  // The session of `swprofile` that run `run` of the plan with this key
  // started for its session `plan_session` (0-based), if any.
  virtual std::optional<std::int64_t> find_plan_session(const std::string& swprofile, const std::string& plan_key,
                                                        const std::string& run, int plan_session) = 0;
  // Marks the session as run to its end (every planned benchmark has an
  // outcome or was left out on purpose), and sets each key of `at_end` (an
  // object: what was measured at the end, e.g. loadavg_end) in the session's
  // fingerprint, in the same transaction.
  virtual void finish_session(std::int64_t session, const nlohmann::json& at_end = nlohmann::json::object()) = 0;
  // One session with its fingerprint, if it exists.
  virtual std::optional<SessionListing> session(std::int64_t session) = 0;
  // Every benchmark the session planned or stored anything for.
  virtual std::vector<SessionBenchmark> session_benchmarks(std::int64_t session) = 0;
  // Deletes the session with its samples and outcomes in one transaction.
  // SUT, swprofile and benchmark rows stay (other sessions may use them).
  virtual void delete_session(std::int64_t session) = 0;
  // Deletes the samples and the outcome of `benchmark` in `session` in one
  // transaction, so a resumed run can redo an interrupted benchmark cleanly.
  virtual void discard_benchmark(std::int64_t session, const BenchmarkKey& benchmark) = 0;
  // Deletes only the outcome: a benchmark stopped by the user's interrupt
  // keeps its committed repeats, but is not "failed" (nor "ok").
  virtual void discard_outcome(std::int64_t session, const BenchmarkKey& benchmark) = 0;
  // --- kernels booted on ssh SUTs ---
  virtual std::int64_t record_boot(const BootRecord& boot) = 0;
  // Boots of one run of a plan (plan_key and run empty: every boot), oldest first.
  virtual std::vector<BootRecord> list_boots(const std::string& plan_key, const std::string& run) = 0;

  // --- stored logs (schema version 5) ---
  // Keeps `text` as a new log of `kind` (e.g. "bisect") named `name`, stamped
  // with the current UTC time, in one transaction. Returns its id.
  virtual std::int64_t add_log(const std::string& kind, const std::string& name, const std::string& text) = 0;
  // The logs of `kind` ("": every kind), oldest first, text included. A
  // read-only store older than version 5 has none.
  virtual std::vector<StoredLog> logs(const std::string& kind) = 0;

  // --- kernel profiles (schema version 6) ---
  // Keeps the profile of `benchmark` in `session`, replacing one stored
  // before, in one transaction.
  virtual void add_kernel_profile(std::int64_t session, const BenchmarkKey& benchmark,
                                  const records::KernelProfile& profile) = 0;
  // The profiles of the benchmark named `benchmark` (any parameters) in the
  // sessions of `swprofile`, oldest session first. A read-only store older
  // than version 6 has none.
  virtual std::vector<StoredKernelProfile> kernel_profiles(const std::string& swprofile,
                                                          const std::string& benchmark) = 0;

  // --- moving sessions between stores (`kbench merge`) ---
  // The session with this uid, if the store has it.
  virtual std::optional<std::int64_t> find_session_by_uid(const std::string& uid) = 0;
  // The whole session (throws RunError when it does not exist).
  virtual SessionContent read_session(std::int64_t session) = 0;
  // Writes a session read from another store, in one transaction, with its uid, timestamps, outcomes and
  // results as they were. Keeps content.session_index when no session of that (SUT, swprofile) has it in
  // this store, else takes the next free index. Creates SUT, swprofile, benchmark and result-class rows as
  // needed; a result class whose stored "better" differs is a RunError naming it. Returns the new id.
  virtual std::int64_t import_session(const SessionContent& content) = 0;

  // SQLite's `PRAGMA integrity_check` plus `PRAGMA foreign_key_check`:
  // empty when the store is sound, else one line per problem.
  virtual std::vector<std::string> integrity_check() = 0;

  // The URL or path the store was opened from, for messages.
  virtual const std::string& location() const = 0;
};

enum class OpenMode {
  CreateIfMissing,  // kbench run, plan exec
  MustExist,        // kbench session delete: a missing store is bad input
  ReadOnly,         // kbench compare / list / show / noise / export: MustExist, never written
};

// A store URL taken apart. Accepted forms (docs/resultstore.md):
//   sqlite:///abs/path.db   absolute path
//   sqlite://rel/path.db    path relative to the working directory
//   /abs/path.db, rel.db    a plain path (no "scheme:") is an SQLite file
//   postgresql://user@host:port/database?options (or postgres://): a libpq
//                           URI without a password (refused: InputError)
struct StoreUrl {
  std::string scheme;  // "sqlite" or "postgresql"
  std::string path;    // file system path for sqlite, the whole URI for postgresql
};
// Throws InputError naming the URL and the known schemes for anything else.
StoreUrl parse_store_url(const std::string& url);

// Throws InputError for an unknown scheme, an unreadable file, a file that is
// not a kbench store, or a store from a newer schema version.
std::unique_ptr<ResultStore> open_store(const std::string& url, OpenMode mode);

// Whether `url` holds a store yet: the SQLite file exists, or the PostgreSQL
// database has kbench's tables. What is not there, open_store creates with
// CreateIfMissing and refuses otherwise. Throws InputError as open_store does
// for a URL it cannot reach.
bool store_present(const std::string& url);

// --store is the caller's business; this is $KBENCH_STORE when set and
// non-empty, else sqlite:// + $XDG_DATA_HOME/kbench/results.db, with
// XDG_DATA_HOME defaulting to $HOME/.local/share (when unset or empty).
std::string default_store_url();

}  // namespace kbench::store
