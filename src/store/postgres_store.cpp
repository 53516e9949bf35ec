// The PostgreSQL resultstore (docs/resultstore.md, "PostgreSQL"): the SQLite
// store's semantics for many controllers writing into one database at once.
#include "store/postgres_store.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/errors.h"
#include "common/utc_time.h"
#include "store/postgres_connection.h"
#include "store/schema.h"
#include "store/store_text.h"

namespace kbench::store {

namespace {

// pg_advisory_xact_lock key of schema creation and migration: two first-time
// writers must not both create the tables. ("kbench" in ASCII.)
constexpr std::int64_t kSchemaLockKey = 0x6b62656e6368;
// Conflicts PostgreSQL resolves by aborting one transaction (deadlock,
// serialization) are retried this often before giving up.
constexpr int kTransactionAttempts = 5;

// "$2,$3,..." for an IN list of `count` parameters starting at `first`.
std::string placeholders(std::size_t count, int first) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    if (i) text += ',';
    text += '$' + std::to_string(first + static_cast<int>(i));
  }
  return text;
}

// A PostgreSQL array literal of numbers: one parameter for a whole repeat.
template <class Number>
std::string array_literal(const std::vector<Number>& values) {
  std::string text = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) text += ',';
    if constexpr (std::is_floating_point_v<Number>) {
      char buffer[32];
      const auto end = std::to_chars(buffer, buffer + sizeof buffer, values[i]).ptr;
      text.append(buffer, end);
    } else {
      text += std::to_string(values[i]);
    }
  }
  text += '}';
  return text;
}

// An array literal of text elements, each quoted.
std::string text_array_literal(const std::vector<std::string>& values) {
  std::string text = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) text += ',';
    text += '"';
    for (const char c : values[i]) {
      if (c == '"' || c == '\\') text += '\\';
      text += c;
    }
    text += '"';
  }
  text += '}';
  return text;
}

class PostgresSchemaConnection final : public SchemaConnection {
 public:
  explicit PostgresSchemaConnection(PgConnection& connection) : connection_(connection) {}
  void execute(const std::string& sql) override { connection_.execute(sql); }
  std::optional<std::string> meta(const std::string& key) override {
    if (connection_.query("SELECT to_regclass('kbench_meta') IS NOT NULL").text(0, 0) != "t") return std::nullopt;
    auto result = connection_.query("SELECT value FROM kbench_meta WHERE key = $1", PgParams().add(key));
    if (result.rows() == 0) return std::nullopt;
    return result.text(0, 0);
  }
  void set_meta(const std::string& key, const std::string& value) override {
    connection_.query(R"sql(INSERT INTO kbench_meta(key, value) VALUES ($1, $2)
                            ON CONFLICT (key) DO UPDATE SET value = excluded.value)sql",
                      PgParams().add(key).add(value));
  }

 private:
  PgConnection& connection_;
};

class PostgresStore final : public ResultStore {
 public:
  PostgresStore(std::string url, bool writable) : url_(std::move(url)), db_(url_, url_), writable_(writable) {}

  void initialise(OpenMode mode) {
    PostgresSchemaConnection schema(db_);
    const auto stored = schema.meta("schema_version");
    if (!stored && mode != OpenMode::CreateIfMissing) {
      throw InputError("store " + url_ +
                       ": the database has no kbench tables; expected a store written by `kbench run` "
                       "(see --store / KBENCH_STORE)");
    }
    const int found = stored ? checked_schema_version(url_, stored) : 0;
    if (!writable_) {
      if (found != kSchemaVersion) {
        throw InputError("store " + url_ + " has schema version " + std::to_string(found) +
                         "; a writing command (kbench run) migrates it to " + std::to_string(kSchemaVersion) +
                         " first");
      }
      // Nothing this connection does can write, whatever a bug might try.
      db_.execute("SET default_transaction_read_only = on");
      return;
    }
    if (found != kSchemaVersion) {
      // Two controllers starting on a new database at once: the first
      // creates (or migrates) under the lock, the second then finds it done.
      // The lock is the session's, taken before BEGIN: a transaction that
      // starts after the other writer's commit sees its tables (PostgreSQL
      // refreshes its catalog caches at transaction start, not when an
      // advisory lock is granted).
      db_.query("SELECT pg_advisory_lock($1)", PgParams().add(kSchemaLockKey));
      try {
        db_.execute("BEGIN");
        create_or_migrate_if_needed(schema);
        db_.execute("COMMIT");
      } catch (...) {
        db_.rollback_quietly();
        db_.query("SELECT pg_advisory_unlock($1)", PgParams().add(kSchemaLockKey));
        throw;
      }
      db_.query("SELECT pg_advisory_unlock($1)", PgParams().add(kSchemaLockKey));
    }
  }

  std::int64_t begin_session(const SessionStart& start) override {
    require_writable();
    Sut sut = start.sut;
    if (sut.name.empty()) sut.name = sut.hostname;
    if (sut.name.empty()) throw InputError("new session: the SUT has neither a name nor a hostname");
    if (start.swprofile.empty()) throw InputError("new session: the swprofile name is empty");
    const std::string started_at = start.started_at.empty() ? utc_now_iso8601() : start.started_at;
    const std::string fingerprint = start.fingerprint.is_null() ? std::string("{}") : start.fingerprint.dump();
    return in_transaction([&] {
      const auto [sut_id, swprofile_id] = sut_and_swprofile(sut, start.swprofile);
      lock_session_numbers(sut_id, swprofile_id);
      auto inserted = db_.query(R"sql(
        INSERT INTO session(sut_id, swprofile_id, idx, started_at, kernel_release, fingerprint, planned, uid, sut_class)
        VALUES ($1, $2, (SELECT COALESCE(MAX(idx) + 1, 0) FROM session WHERE sut_id = $1 AND swprofile_id = $2),
                $3, $4, $5, $6, $7, $8)
        RETURNING id)sql",
                                PgParams()
                                    .add(sut_id)
                                    .add(swprofile_id)
                                    .add(started_at)
                                    .add(kernel_release_of(start.fingerprint))
                                    .add(fingerprint)
                                    .add(planned_text(start.planned))
                                    .add(start.uid.empty() ? new_session_uid() : start.uid)
                                    .add(sut_class_of(start.fingerprint)));
      return inserted.integer(0, 0);
    });
  }

  void add_repeat(std::int64_t session, const BenchmarkKey& benchmark, int repeat,
                  const std::vector<records::Sample>& samples) override {
    require_writable();
    if (repeat < 0) {
      throw RunError("store " + url_ + ": " + benchmark.name + ": repeat " + std::to_string(repeat) +
                     " is negative");
    }
    for (const auto& sample : samples) {
      if (!std::isfinite(sample.value)) {
        throw RunError(benchmark.name + " repeat " + std::to_string(repeat) + ": " + sample.result_class.label() +
                       " is not a finite number; repeat not stored");
      }
    }
    // Benchmark and result-class rows are committed on their own, before the
    // repeat: they are shared by every controller and carry no samples, so a
    // killed run leaving one behind leaves nothing partial.
    const std::int64_t benchmark_id = benchmark_id_for(benchmark);
    std::vector<std::int64_t> class_ids = resultclass_ids_for(benchmark_id, benchmark.name, samples);
    std::vector<double> values;
    values.reserve(samples.size());
    for (const auto& sample : samples) values.push_back(sample.value);
    const auto recorded_at = static_cast<std::int64_t>(std::time(nullptr));
    // All samples of the repeat or none: an explicit transaction, so a
    // controller killed before its COMMIT reaches the server leaves nothing
    // of the repeat. The session row is read in it: a missing session stores
    // nothing.
    std::int64_t inserted = 0;
    try {
      inserted = in_transaction([&] {
        return db_.query(R"sql(
          INSERT INTO result(session_id, resultclass_id, repeat, value, recorded_at)
          SELECT s.id, u.class_id, $2, u.value, $3
          FROM session s, unnest($4::bigint[], $5::double precision[]) AS u(class_id, value)
          WHERE s.id = $1)sql",
                         PgParams()
                             .add(session)
                             .add(repeat)
                             .add(recorded_at)
                             .add(array_literal(class_ids))
                             .add(array_literal(values)))
            .affected();
      });
    } catch (const PgError& error) {
      if (error.sqlstate == "23505") {
        throw RunError("store " + url_ + ": " + benchmark.name + " repeat " + std::to_string(repeat) +
                       " of session " + std::to_string(session) + ": " + duplicate_description(samples, class_ids) +
                       " (twice in one repeat, or the repeat was stored before)");
      }
      if (error.sqlstate == "23503") require_session(session);
      throw;
    }
    if (inserted == 0) require_session(session);
  }

  void record_outcome(std::int64_t session, const BenchmarkKey& benchmark, const Outcome& outcome) override {
    require_writable();
    const std::int64_t benchmark_id = benchmark_id_for(benchmark);
    auto stored = db_.query(R"sql(
      INSERT INTO outcome(session_id, benchmark_id, status, reason, stderr_tail, recorded_at)
      SELECT s.id, $2, $3, $4, $5, $6 FROM session s WHERE s.id = $1
      ON CONFLICT (session_id, benchmark_id) DO UPDATE SET status = excluded.status, reason = excluded.reason,
                                stderr_tail = excluded.stderr_tail, recorded_at = excluded.recorded_at)sql",
                            PgParams()
                                .add(session)
                                .add(benchmark_id)
                                .add(std::string(to_string(outcome.status)))
                                .add(outcome.reason)
                                .add(outcome.stderr_tail)
                                .add(static_cast<std::int64_t>(std::time(nullptr))));
    if (stored.affected() == 0) require_session(session);
  }

  std::vector<SutListing> list_suts(const std::string& glob) override {
    auto rows = db_.query(R"sql(
      SELECT t.name, t.hostname, t.arch, t.cpu_model, t.cpu_count, t.memory_gib, t.product_name,
             (SELECT COUNT(*) FROM session s WHERE s.sut_id = t.id)
      FROM sut t WHERE t.name ~ $1 ORDER BY t.name, t.id)sql",
                          PgParams().add(glob_to_regex(glob_or_all(glob))));
    std::vector<SutListing> listing;
    for (int i = 0; i < rows.rows(); ++i) {
      SutListing row;
      row.sut.name = rows.text(i, 0);
      row.sut.hostname = rows.text(i, 1);
      row.sut.arch = rows.text(i, 2);
      row.sut.cpu_model = rows.text(i, 3);
      row.sut.cpu_count = static_cast<int>(rows.integer(i, 4));
      row.sut.memory_gib = rows.integer(i, 5);
      row.sut.product_name = rows.text(i, 6);
      row.sessions = static_cast<int>(rows.integer(i, 7));
      listing.push_back(std::move(row));
    }
    return listing;
  }

  std::vector<SwprofileListing> list_swprofiles(const std::string& glob) override {
    auto rows = db_.query(R"sql(
      SELECT p.name,
             (SELECT s.kernel_release FROM session s WHERE s.swprofile_id = p.id ORDER BY s.id DESC LIMIT 1),
             (SELECT COUNT(*) FROM session s WHERE s.swprofile_id = p.id),
             (SELECT COUNT(*) FROM session s JOIN result r ON r.session_id = s.id WHERE s.swprofile_id = p.id),
             (SELECT string_agg(DISTINCT t.name, E'\n' ORDER BY t.name) FROM session s JOIN sut t ON t.id = s.sut_id
              WHERE s.swprofile_id = p.id)
      FROM swprofile p WHERE p.name ~ $1 ORDER BY p.name)sql",
                          PgParams().add(glob_to_regex(glob_or_all(glob))));
    std::vector<SwprofileListing> listing;
    for (int i = 0; i < rows.rows(); ++i) {
      SwprofileListing row;
      row.name = rows.text(i, 0);
      row.kernel_release = rows.text(i, 1);
      row.sessions = static_cast<int>(rows.integer(i, 2));
      row.samples = rows.integer(i, 3);
      if (!rows.is_null(i, 4)) {
        const std::string names = rows.text(i, 4);
        std::size_t begin = 0;
        while (begin <= names.size()) {
          const auto end = std::min(names.find('\n', begin), names.size());
          row.suts.push_back(names.substr(begin, end - begin));
          begin = end + 1;
        }
      }
      listing.push_back(std::move(row));
    }
    return listing;
  }

  std::vector<BenchmarkListing> list_benchmarks(const std::string& glob) override {
    const PgParams params = PgParams().add(glob_to_regex(glob_or_all(glob)));
    auto classes = db_.query(R"sql(
      SELECT b.name, rc.name, rc.unit, rc.better
      FROM benchmark b LEFT JOIN resultclass rc ON rc.benchmark_id = b.id
      WHERE b.name ~ $1 ORDER BY b.name, rc.id)sql",
                             params);
    auto counts = db_.query(R"sql(
      SELECT b.name, COUNT(*) FROM benchmark b
      JOIN resultclass rc ON rc.benchmark_id = b.id JOIN result r ON r.resultclass_id = rc.id
      WHERE b.name ~ $1 GROUP BY b.name)sql",
                            params);
    std::vector<BenchmarkListing> listing;
    for (int i = 0; i < classes.rows(); ++i) {
      const std::string name = classes.text(i, 0);
      if (listing.empty() || listing.back().name != name) listing.push_back(BenchmarkListing{name, {}, 0});
      if (classes.is_null(i, 1)) continue;
      ResultClass rc{classes.text(i, 1), classes.text(i, 2), better_from_text(classes.text(i, 3))};
      auto& known = listing.back().result_classes;
      const bool seen = std::any_of(known.begin(), known.end(), [&](const ResultClass& other) {
        return other.name == rc.name && other.unit == rc.unit;
      });
      if (!seen) known.push_back(std::move(rc));
    }
    std::unordered_map<std::string, std::int64_t> samples;
    for (int i = 0; i < counts.rows(); ++i) samples[counts.text(i, 0)] = counts.integer(i, 1);
    for (auto& row : listing) row.samples = samples[row.name];
    return listing;
  }

  std::vector<OutcomeListing> list_outcomes(const std::vector<std::string>& swprofiles,
                                            OutcomeStatus status) override {
    std::string sql = R"sql(
      SELECT t.name, p.name, s.id, b.name, o.status, o.reason, o.stderr_tail, s.idx
      FROM outcome o JOIN session s ON s.id = o.session_id JOIN sut t ON t.id = s.sut_id
      JOIN swprofile p ON p.id = s.swprofile_id JOIN benchmark b ON b.id = o.benchmark_id
      WHERE o.status = $1)sql";
    if (!swprofiles.empty()) sql += " AND p.name IN (" + placeholders(swprofiles.size(), 2) + ")";
    sql += " ORDER BY s.id, b.name, b.id";
    PgParams params;
    params.add(std::string(to_string(status)));
    for (const auto& name : swprofiles) params.add(name);
    auto rows = db_.query(sql, params);
    std::vector<OutcomeListing> listing;
    for (int i = 0; i < rows.rows(); ++i) {
      OutcomeListing row;
      row.sut = rows.text(i, 0);
      row.swprofile = rows.text(i, 1);
      row.session = rows.integer(i, 2);
      row.benchmark = rows.text(i, 3);
      row.outcome.status = parse_outcome_status(rows.text(i, 4)).value_or(OutcomeStatus::Failed);
      row.outcome.reason = rows.text(i, 5);
      row.outcome.stderr_tail = rows.text(i, 6);
      row.session_number = static_cast<int>(rows.integer(i, 7)) + 1;
      listing.push_back(std::move(row));
    }
    return listing;
  }

  bool has_swprofile(const std::string& name) override {
    return db_.query("SELECT 1 FROM swprofile WHERE name = $1", PgParams().add(name)).rows() > 0;
  }

  std::vector<SampleRow> samples(const SampleQuery& query) override {
    std::vector<SampleRow> rows;
    for_each_sample(query, [&](const SampleRow& row) { rows.push_back(row); });
    return rows;
  }

  void for_each_sample(const SampleQuery& query, const std::function<void(const SampleRow&)>& sink) override {
    // As in the SQLite store: filters on the small tables, then the results
    // of each session in primary-key order, one query per session, in binary.
    struct SessionInfo {
      std::int64_t id;
      std::string sut, swprofile;
      int index;
      std::string sut_class;
    };
    struct ClassInfo {
      std::int64_t benchmark_id;
      std::string benchmark;
      Params params;
      ResultClass result_class;
    };
    std::string session_sql = R"sql(
      SELECT s.id, t.name, p.name, s.idx, s.sut_class FROM session s
      JOIN sut t ON t.id = s.sut_id JOIN swprofile p ON p.id = s.swprofile_id
      WHERE t.name ~ $1 AND s.sut_class ~ $2)sql";
    if (!query.swprofiles.empty()) session_sql += " AND p.name IN (" + placeholders(query.swprofiles.size(), 3) + ")";
    session_sql += " ORDER BY s.id";
    PgParams session_params;
    session_params.add(glob_to_regex(glob_or_all(query.sut_glob))).add(glob_to_regex(glob_or_all(query.class_glob)));
    for (const auto& name : query.swprofiles) session_params.add(name);
    std::vector<SessionInfo> sessions;
    {
      auto rows = db_.query(session_sql, session_params);
      for (int i = 0; i < rows.rows(); ++i) {
        sessions.push_back({rows.integer(i, 0), rows.text(i, 1), rows.text(i, 2), static_cast<int>(rows.integer(i, 3)),
                            rows.text(i, 4)});
      }
    }
    if (sessions.empty()) return;

    std::unordered_map<std::int64_t, ClassInfo> classes;
    {
      auto rows = db_.query(R"sql(
        SELECT rc.id, b.name, b.params, rc.name, rc.unit, rc.better, b.id
        FROM resultclass rc JOIN benchmark b ON b.id = rc.benchmark_id
        WHERE b.name ~ $1 AND (rc.name || ' (' || rc.unit || ')') ~ $2)sql",
                            PgParams()
                                .add(glob_to_regex(glob_or_all(query.benchmark_glob)))
                                .add(glob_to_regex(glob_or_all(query.resultclass_glob))));
      for (int i = 0; i < rows.rows(); ++i) {
        classes.emplace(rows.integer(i, 0),
                        ClassInfo{rows.integer(i, 6), rows.text(i, 1), params_from_text(rows.text(i, 2)),
                                  ResultClass{rows.text(i, 3), rows.text(i, 4), better_from_text(rows.text(i, 5))}});
      }
    }
    if (classes.empty()) return;

    std::unordered_map<std::int64_t, bool> ok_benchmarks;
    SampleRow row;
    for (const auto& session : sessions) {
      row.sut = session.sut;
      row.swprofile = session.swprofile;
      row.session = session.id;
      row.session_index = session.index;
      row.sut_class = session.sut_class;
      if (query.settled_only) {
        ok_benchmarks.clear();
        auto settled = db_.query("SELECT benchmark_id FROM outcome WHERE session_id = $1 AND status = 'ok'",
                                 PgParams().add(session.id));
        for (int i = 0; i < settled.rows(); ++i) ok_benchmarks[settled.integer(i, 0)] = true;
      }
      auto results = db_.query_binary(
          "SELECT resultclass_id, repeat, value FROM result WHERE session_id = $1 ORDER BY resultclass_id, repeat",
          PgParams().add(session.id));
      std::int64_t current_class = -1;
      const ClassInfo* info = nullptr;
      const int count = results.rows();
      for (int i = 0; i < count; ++i) {
        const std::int64_t class_id = results.binary_int8(i, 0);
        if (class_id != current_class) {
          current_class = class_id;
          const auto it = classes.find(class_id);
          info = it == classes.end() ? nullptr : &it->second;
          if (info && query.settled_only && !ok_benchmarks.count(info->benchmark_id)) info = nullptr;
          if (info) {
            row.benchmark = info->benchmark;
            row.params = info->params;
            row.result_class = info->result_class;
          }
        }
        if (!info) continue;
        row.repeat = results.binary_int4(i, 1);
        row.value = results.binary_float8(i, 2);
        sink(row);
      }
    }
  }

  std::vector<SessionListing> list_sessions(const std::vector<std::string>& swprofiles) override {
    std::string sql = session_listing_sql();
    if (!swprofiles.empty()) sql += " WHERE p.name IN (" + placeholders(swprofiles.size(), 1) + ")";
    sql += " ORDER BY s.id";
    PgParams params;
    for (const auto& name : swprofiles) params.add(name);
    auto rows = db_.query(sql, params);
    std::vector<SessionListing> listing;
    for (int i = 0; i < rows.rows(); ++i) listing.push_back(session_from_row(rows, i, /*with_fingerprint=*/false));
    return listing;
  }

  std::optional<SessionListing> session(std::int64_t session) override {
    auto rows = db_.query(session_listing_sql() + " WHERE s.id = $1", PgParams().add(session));
    if (rows.rows() == 0) return std::nullopt;
    return session_from_row(rows, 0, /*with_fingerprint=*/true);
  }

  std::vector<SessionBenchmark> session_benchmarks(std::int64_t session) override {
    std::vector<SessionBenchmark> rows;
    std::unordered_map<std::int64_t, std::size_t> by_id;
    auto row_for = [&](std::int64_t benchmark_id, const std::string& name, const Params& params) -> SessionBenchmark& {
      if (auto it = by_id.find(benchmark_id); it != by_id.end()) return rows[it->second];
      by_id.emplace(benchmark_id, rows.size());
      rows.push_back(SessionBenchmark{name, params, std::nullopt, 0, 0});
      return rows.back();
    };
    for (const auto& [id, key] : planned_with_ids(session)) row_for(id, key.name, key.params);
    auto outcomes = db_.query(R"sql(
      SELECT b.id, b.name, b.params, o.status, o.reason, o.stderr_tail
      FROM outcome o JOIN benchmark b ON b.id = o.benchmark_id WHERE o.session_id = $1 ORDER BY b.name, b.id)sql",
                              PgParams().add(session));
    for (int i = 0; i < outcomes.rows(); ++i) {
      auto& row = row_for(outcomes.integer(i, 0), outcomes.text(i, 1), params_from_text(outcomes.text(i, 2)));
      row.outcome = Outcome{parse_outcome_status(outcomes.text(i, 3)).value_or(OutcomeStatus::Failed),
                            outcomes.text(i, 4), outcomes.text(i, 5)};
    }
    auto stored = db_.query(R"sql(
      SELECT b.id, b.name, b.params, COUNT(DISTINCT r.repeat), COUNT(*)
      FROM result r JOIN resultclass rc ON rc.id = r.resultclass_id JOIN benchmark b ON b.id = rc.benchmark_id
      WHERE r.session_id = $1 GROUP BY b.id ORDER BY b.name, b.id)sql",
                            PgParams().add(session));
    for (int i = 0; i < stored.rows(); ++i) {
      auto& row = row_for(stored.integer(i, 0), stored.text(i, 1), params_from_text(stored.text(i, 2)));
      row.repeats = static_cast<int>(stored.integer(i, 3));
      row.samples = stored.integer(i, 4);
    }
    return rows;
  }

  void finish_session(std::int64_t session, const nlohmann::json& at_end) override {
    require_writable();
    in_transaction([&] {
      auto current = db_.query("SELECT fingerprint FROM session WHERE id = $1 FOR UPDATE", PgParams().add(session));
      if (current.rows() == 0) missing_session(session);
      auto fingerprint = nlohmann::json::parse(current.text(0, 0), nullptr, /*allow_exceptions=*/false);
      if (!fingerprint.is_object()) fingerprint = nlohmann::json::object();
      if (at_end.is_object()) {
        for (const auto& [key, value] : at_end.items()) fingerprint[key] = value;
      }
      db_.query("UPDATE session SET finished_at = $2, fingerprint = $3 WHERE id = $1",
                PgParams().add(session).add(utc_now_iso8601()).add(fingerprint.dump()));
      return 0;
    });
    refresh_statistics();
  }

  // A session adds thousands of result rows at once; until autovacuum gets
  // to them the planner's statistics describe the store before it, and a
  // compare right after a run (the usual case) picks plans for empty tables:
  // 6 s instead of 2 s on bench/compare-speed's store. ANALYZE reads a fixed
  // sample (about 0.1 s); a role that does not own the tables is skipped by
  // the server with a warning, which is not for users.
  void refresh_statistics() {
    db_.execute("SET client_min_messages = error; ANALYZE session, resultclass, result; "
                "SET client_min_messages = warning");
  }

  void delete_session(std::int64_t session) override {
    require_writable();
    in_transaction([&] {
      auto locked = db_.query("SELECT 1 FROM session WHERE id = $1 FOR UPDATE", PgParams().add(session));
      if (locked.rows() == 0) missing_session(session);
      for (const char* sql : {"DELETE FROM result WHERE session_id = $1", "DELETE FROM outcome WHERE session_id = $1",
                              "DELETE FROM session WHERE id = $1"}) {
        db_.query(sql, PgParams().add(session));
      }
      return 0;
    });
  }

  std::vector<int> stored_repeats(std::int64_t session, const BenchmarkKey& benchmark) override {
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return {};
    auto rows = db_.query(R"sql(
      SELECT DISTINCT r.repeat FROM result r JOIN resultclass rc ON rc.id = r.resultclass_id
      WHERE r.session_id = $1 AND rc.benchmark_id = $2 ORDER BY r.repeat)sql",
                          PgParams().add(session).add(*benchmark_id));
    std::vector<int> repeats;
    for (int i = 0; i < rows.rows(); ++i) repeats.push_back(static_cast<int>(rows.integer(i, 0)));
    return repeats;
  }

  std::optional<Outcome> outcome_of(std::int64_t session, const BenchmarkKey& benchmark) override {
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return std::nullopt;
    auto rows = db_.query("SELECT status, reason, stderr_tail FROM outcome WHERE session_id = $1 AND benchmark_id = $2",
                          PgParams().add(session).add(*benchmark_id));
    if (rows.rows() == 0) return std::nullopt;
    return Outcome{parse_outcome_status(rows.text(0, 0)).value_or(OutcomeStatus::Failed), rows.text(0, 1),
                   rows.text(0, 2)};
  }

  std::optional<nlohmann::json> latest_plan(const std::string& plan_key,
                                            const std::vector<std::string>& swprofiles) override {
    std::string sql = R"sql(
      SELECT s.fingerprint::jsonb -> 'plan' FROM session s JOIN swprofile w ON w.id = s.swprofile_id
      WHERE s.fingerprint::jsonb #>> '{plan,key}' = $1)sql";
    if (!swprofiles.empty()) sql += " AND w.name IN (" + placeholders(swprofiles.size(), 2) + ")";
    sql += " ORDER BY s.id DESC LIMIT 1";
    PgParams params;
    params.add(plan_key);
    for (const auto& name : swprofiles) params.add(name);
    auto rows = db_.query(sql, params);
    if (rows.rows() == 0 || rows.is_null(0, 0)) return std::nullopt;
    auto plan = nlohmann::json::parse(rows.text(0, 0), nullptr, /*allow_exceptions=*/false);
    if (!plan.is_object()) return std::nullopt;
    return plan;
  }

  std::optional<std::int64_t> find_plan_session(const std::string& swprofile, const std::string& plan_key,
                                                const std::string& run, int plan_session) override {
    auto rows = db_.query(R"sql(
      SELECT s.id FROM session s JOIN swprofile w ON w.id = s.swprofile_id
      WHERE w.name = $1 AND s.fingerprint::jsonb #>> '{plan,key}' = $2
        AND s.fingerprint::jsonb #>> '{plan,run}' = $3
        AND s.fingerprint::jsonb #> '{plan,session}' = to_jsonb($4::bigint)
      ORDER BY s.id DESC LIMIT 1)sql",
                          PgParams().add(swprofile).add(plan_key).add(run).add(plan_session));
    if (rows.rows() == 0) return std::nullopt;
    return rows.integer(0, 0);
  }

  void discard_benchmark(std::int64_t session, const BenchmarkKey& benchmark) override {
    require_writable();
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return;
    in_transaction([&] {
      db_.query(R"sql(DELETE FROM result WHERE session_id = $1
                      AND resultclass_id IN (SELECT id FROM resultclass WHERE benchmark_id = $2))sql",
                PgParams().add(session).add(*benchmark_id));
      db_.query("DELETE FROM outcome WHERE session_id = $1 AND benchmark_id = $2",
                PgParams().add(session).add(*benchmark_id));
      return 0;
    });
  }

  void discard_outcome(std::int64_t session, const BenchmarkKey& benchmark) override {
    require_writable();
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return;
    db_.query("DELETE FROM outcome WHERE session_id = $1 AND benchmark_id = $2",
              PgParams().add(session).add(*benchmark_id));
  }

  std::int64_t record_boot(const BootRecord& boot) override {
    require_writable();
    PgParams params;
    params.add(boot.sut).add(boot.swprofile).add(boot.plan_key).add(boot.run).add(boot.plan_session)
        .add(boot.number).add(boot.method).add(boot.started_at).add(boot.seconds).add(boot.ok ? 1 : 0)
        .add(boot.power_cycled ? 1 : 0).add(boot.release).add(boot.reason).add(boot.console_tail);
    if (boot.session) {
      params.add(*boot.session);
    } else {
      params.add_null();
    }
    auto inserted = db_.query(R"sql(
      INSERT INTO boot (sut, swprofile, plan_key, run, plan_session, number, method, started_at, seconds, ok,
                        power_cycled, release, reason, console_tail, session_id)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id)sql",
                              params);
    return inserted.integer(0, 0);
  }

  std::vector<BootRecord> list_boots(const std::string& plan_key, const std::string& run) override {
    auto rows = db_.query(R"sql(
      SELECT id, sut, swprofile, plan_key, run, plan_session, number, method, started_at, seconds, ok, power_cycled,
             release, reason, console_tail, session_id
      FROM boot WHERE ($1 = '' OR plan_key = $1) AND ($2 = '' OR run = $2) ORDER BY id)sql",
                          PgParams().add(plan_key).add(run));
    std::vector<BootRecord> boots;
    for (int i = 0; i < rows.rows(); ++i) {
      BootRecord boot;
      boot.id = rows.integer(i, 0);
      boot.sut = rows.text(i, 1);
      boot.swprofile = rows.text(i, 2);
      boot.plan_key = rows.text(i, 3);
      boot.run = rows.text(i, 4);
      boot.plan_session = static_cast<int>(rows.integer(i, 5));
      boot.number = static_cast<int>(rows.integer(i, 6));
      boot.method = rows.text(i, 7);
      boot.started_at = rows.text(i, 8);
      boot.seconds = rows.real(i, 9);
      boot.ok = rows.integer(i, 10) != 0;
      boot.power_cycled = rows.integer(i, 11) != 0;
      boot.release = rows.text(i, 12);
      boot.reason = rows.text(i, 13);
      boot.console_tail = rows.text(i, 14);
      if (!rows.is_null(i, 15)) boot.session = rows.integer(i, 15);
      boots.push_back(std::move(boot));
    }
    return boots;
  }

  std::int64_t add_log(const std::string& kind, const std::string& name, const std::string& text) override {
    require_writable();
    auto inserted = db_.query("INSERT INTO log (kind, name, created_utc, text) VALUES ($1, $2, $3, $4) RETURNING id",
                              PgParams().add(kind).add(name).add(utc_now_iso8601()).add(text));
    return inserted.integer(0, 0);
  }

  std::vector<StoredLog> logs(const std::string& kind) override {
    auto rows = db_.query("SELECT id, kind, name, created_utc, text FROM log WHERE ($1 = '' OR kind = $1) ORDER BY id",
                          PgParams().add(kind));
    std::vector<StoredLog> found;
    for (int i = 0; i < rows.rows(); ++i) {
      found.push_back({rows.integer(i, 0), rows.text(i, 1), rows.text(i, 2), rows.text(i, 3), rows.text(i, 4)});
    }
    return found;
  }

  std::optional<std::int64_t> find_session_by_uid(const std::string& uid) override {
    auto rows = db_.query("SELECT id FROM session WHERE uid = $1", PgParams().add(uid));
    if (rows.rows() == 0) return std::nullopt;
    return rows.integer(0, 0);
  }

  SessionContent read_session(std::int64_t session) override {
    auto rows = db_.query(R"sql(
      SELECT s.uid, t.name, t.hostname, t.arch, t.cpu_model, t.cpu_count, t.memory_gib, t.product_name, p.name,
             s.idx, s.started_at, s.kernel_release, s.finished_at, s.fingerprint, s.planned
      FROM session s JOIN sut t ON t.id = s.sut_id JOIN swprofile p ON p.id = s.swprofile_id WHERE s.id = $1)sql",
                          PgParams().add(session));
    if (rows.rows() == 0) missing_session(session);
    SessionContent content;
    content.uid = rows.text(0, 0);
    content.sut = Sut{rows.text(0, 1), rows.text(0, 2), rows.text(0, 3), rows.text(0, 4),
                      static_cast<int>(rows.integer(0, 5)), rows.integer(0, 6), rows.text(0, 7)};
    content.swprofile = rows.text(0, 8);
    content.session_index = static_cast<int>(rows.integer(0, 9));
    content.started_at = rows.text(0, 10);
    content.kernel_release = rows.text(0, 11);
    if (!rows.is_null(0, 12)) content.finished_at = rows.text(0, 12);
    content.fingerprint = nlohmann::json::parse(rows.text(0, 13), nullptr, /*allow_exceptions=*/false);
    if (!rows.is_null(0, 14)) content.planned = planned_from_text(rows.text(0, 14));
    auto outcomes = db_.query(R"sql(
      SELECT b.name, b.params, o.status, o.reason, o.stderr_tail, o.recorded_at
      FROM outcome o JOIN benchmark b ON b.id = o.benchmark_id WHERE o.session_id = $1 ORDER BY b.name, b.params)sql",
                              PgParams().add(session));
    for (int i = 0; i < outcomes.rows(); ++i) {
      content.outcomes.push_back(StoredOutcome{
          BenchmarkKey{outcomes.text(i, 0), params_from_text(outcomes.text(i, 1))},
          Outcome{parse_outcome_status(outcomes.text(i, 2)).value_or(OutcomeStatus::Failed), outcomes.text(i, 3),
                  outcomes.text(i, 4)},
          outcomes.integer(i, 5)});
    }
    auto results = db_.query(R"sql(
      SELECT b.name, b.params, rc.name, rc.unit, rc.better, r.repeat, r.value, r.recorded_at
      FROM result r JOIN resultclass rc ON rc.id = r.resultclass_id JOIN benchmark b ON b.id = rc.benchmark_id
      WHERE r.session_id = $1 ORDER BY b.name, b.params, rc.name, rc.unit, r.repeat)sql",
                             PgParams().add(session));
    content.results.reserve(results.rows());
    for (int i = 0; i < results.rows(); ++i) {
      // Text values are the shortest exact form (extra_float_digits 1, the
      // default since PostgreSQL 12): strtod reads back the same double.
      content.results.push_back(StoredResult{
          BenchmarkKey{results.text(i, 0), params_from_text(results.text(i, 1))},
          ResultClass{results.text(i, 2), results.text(i, 3), better_from_text(results.text(i, 4))},
          static_cast<int>(results.integer(i, 5)), results.real(i, 6), results.integer(i, 7)});
    }
    return content;
  }

  std::int64_t import_session(const SessionContent& content) override {
    require_writable();
    Sut sut = content.sut;
    if (sut.name.empty()) sut.name = sut.hostname;
    if (sut.name.empty()) throw InputError("imported session: the SUT has neither a name nor a hostname");
    if (content.swprofile.empty()) throw InputError("imported session: the swprofile name is empty");
    for (const auto& result : content.results) {
      if (!std::isfinite(result.value) || result.repeat < 0) {
        throw RunError("store " + url_ + ": imported session " + content.uid + ": " + result.benchmark.name + " " +
                       result.result_class.label() + " repeat " + std::to_string(result.repeat) +
                       " is not a finite value of a repeat >= 0");
      }
    }
    importing_ = true;
    struct ImportDone {
      bool& flag;
      ~ImportDone() { flag = false; }
    } done{importing_};
    return in_transaction([&] {
      const auto [sut_id, swprofile_id] = sut_and_swprofile(sut, content.swprofile);
      lock_session_numbers(sut_id, swprofile_id);
      const bool index_taken =
          db_.query("SELECT 1 FROM session WHERE sut_id = $1 AND swprofile_id = $2 AND idx = $3",
                    PgParams().add(sut_id).add(swprofile_id).add(content.session_index))
              .rows() > 0;
      PgParams session_params;
      session_params.add(sut_id).add(swprofile_id).add(content.session_index).add(index_taken ? 1 : 0)
          .add(content.started_at).add(content.kernel_release)
          .add(content.fingerprint.is_null() ? std::string("{}") : content.fingerprint.dump());
      if (content.planned) {
        session_params.add(planned_text(*content.planned));
      } else {
        session_params.add_null();
      }
      if (content.finished_at) {
        session_params.add(*content.finished_at);
      } else {
        session_params.add_null();
      }
      session_params.add(content.uid.empty() ? new_session_uid() : content.uid).add(sut_class_of(content.fingerprint));
      const std::int64_t session = db_.query(R"sql(
        INSERT INTO session(sut_id, swprofile_id, idx, started_at, kernel_release, fingerprint, planned, finished_at,
                            uid, sut_class)
        VALUES ($1, $2,
                CASE WHEN $4::integer = 0 THEN $3::integer
                     ELSE (SELECT COALESCE(MAX(idx) + 1, 0) FROM session WHERE sut_id = $1 AND swprofile_id = $2) END,
                $5, $6, $7, $8, $9, $10, $11)
        RETURNING id)sql",
                                             session_params)
                                       .integer(0, 0);
      for (const auto& stored : content.outcomes) {
        db_.query(R"sql(
          INSERT INTO outcome(session_id, benchmark_id, status, reason, stderr_tail, recorded_at)
          VALUES ($1, $2, $3, $4, $5, $6))sql",
                  PgParams()
                      .add(session)
                      .add(benchmark_id_for(stored.benchmark))
                      .add(std::string(to_string(stored.outcome.status)))
                      .add(stored.outcome.reason)
                      .add(stored.outcome.stderr_tail)
                      .add(stored.recorded_at));
      }
      // Results grouped by benchmark (they come ordered by it): the classes
      // of each group are found or made at once, then every row goes in one
      // statement.
      std::vector<std::int64_t> class_ids, recorded;
      std::vector<std::int64_t> repeats;
      std::vector<double> values;
      std::vector<records::Sample> group;
      std::size_t begin = 0;
      while (begin < content.results.size()) {
        std::size_t end = begin;
        const auto& key = content.results[begin].benchmark;
        group.clear();
        while (end < content.results.size() && content.results[end].benchmark.name == key.name &&
               content.results[end].benchmark.params == key.params) {
          group.push_back(records::Sample{"", content.results[end].result_class, 0, 0});
          ++end;
        }
        const auto ids = resultclass_ids_for(benchmark_id_for(key), key.name, group);
        for (std::size_t i = begin; i < end; ++i) {
          class_ids.push_back(ids[i - begin]);
          repeats.push_back(content.results[i].repeat);
          values.push_back(content.results[i].value);
          recorded.push_back(content.results[i].recorded_at);
        }
        begin = end;
      }
      if (!class_ids.empty()) {
        db_.query(R"sql(
          INSERT INTO result(session_id, resultclass_id, repeat, value, recorded_at)
          SELECT $1, u.class_id, u.repeat, u.value, u.recorded_at
          FROM unnest($2::bigint[], $3::integer[], $4::double precision[], $5::bigint[])
            AS u(class_id, repeat, value, recorded_at))sql",
                  PgParams()
                      .add(session)
                      .add(array_literal(class_ids))
                      .add(array_literal(repeats))
                      .add(array_literal(values))
                      .add(array_literal(recorded)));
      }
      return session;
    });
  }

  std::vector<std::string> integrity_check() override {
    // PostgreSQL enforces the foreign keys and checks its pages itself; what
    // it cannot refuse is a repeat with fewer samples than its benchmark's
    // other repeats in the session, which a partial write would leave.
    std::vector<std::string> problems;
    auto rows = db_.query(R"sql(
      WITH per_repeat AS (
        SELECT r.session_id, rc.benchmark_id, r.repeat, COUNT(*) AS samples
        FROM result r JOIN resultclass rc ON rc.id = r.resultclass_id
        GROUP BY r.session_id, rc.benchmark_id, r.repeat)
      SELECT p.session_id, b.name, p.repeat, p.samples, m.most
      FROM per_repeat p JOIN benchmark b ON b.id = p.benchmark_id
      JOIN (SELECT session_id, benchmark_id, MAX(samples) AS most FROM per_repeat GROUP BY session_id, benchmark_id) m
        ON m.session_id = p.session_id AND m.benchmark_id = p.benchmark_id
      WHERE p.samples < m.most ORDER BY p.session_id, b.name, p.repeat)sql");
    for (int i = 0; i < rows.rows(); ++i) {
      problems.push_back("session " + rows.text(i, 0) + " " + rows.text(i, 1) + " repeat " + rows.text(i, 2) +
                         " has " + rows.text(i, 3) + " samples, other repeats " + rows.text(i, 4));
    }
    return problems;
  }

  const std::string& location() const override { return url_; }

 private:
  void require_writable() const {
    if (!writable_) throw RunError("store " + url_ + ": opened read-only; this command does not write");
  }

  [[noreturn]] void missing_session(std::int64_t session) const {
    throw RunError("store " + url_ + ": session " + std::to_string(session) + " does not exist");
  }

  void require_session(std::int64_t session) {
    if (db_.query("SELECT 1 FROM session WHERE id = $1", PgParams().add(session)).rows() == 0) {
      missing_session(session);
    }
  }

  void create_or_migrate_if_needed(PostgresSchemaConnection& schema) {
    // Under the lock: another writer may have done it meanwhile.
    const auto stored = schema.meta("schema_version");
    if (stored && checked_schema_version(url_, stored) == kSchemaVersion) return;
    create_or_migrate(schema, postgres_dialect(), url_, utc_now_iso8601());
  }

  std::string session_listing_sql() const {
    return "SELECT s.id, t.name, p.name, s.idx, s.started_at, s.kernel_release, s.planned, "
           "s.finished_at IS NOT NULL, (SELECT COUNT(*) FROM result r WHERE r.session_id = s.id), s.fingerprint, "
           "s.uid, s.sut_class "
           "FROM session s JOIN sut t ON t.id = s.sut_id JOIN swprofile p ON p.id = s.swprofile_id";
  }

  SessionListing session_from_row(const PgResult& rows, int i, bool with_fingerprint) {
    SessionListing listing;
    listing.id = rows.integer(i, 0);
    listing.sut = rows.text(i, 1);
    listing.swprofile = rows.text(i, 2);
    listing.session_index = static_cast<int>(rows.integer(i, 3));
    listing.started_at = rows.text(i, 4);
    listing.kernel_release = rows.text(i, 5);
    listing.finished = rows.boolean(i, 7);
    listing.samples = rows.integer(i, 8);
    listing.uid = rows.text(i, 10);
    listing.sut_class = rows.text(i, 11);
    if (with_fingerprint) {
      listing.fingerprint = nlohmann::json::parse(rows.text(i, 9), nullptr, /*allow_exceptions=*/false);
    }
    listing.gaps = session_gaps(listing.id);
    return listing;
  }

  // The session's planned benchmarks in plan order, each with its benchmark
  // row's id; a planned benchmark that never started may have no row yet and
  // gets a negative id of its own.
  std::vector<std::pair<std::int64_t, BenchmarkKey>> planned_with_ids(std::int64_t session) {
    std::vector<std::pair<std::int64_t, BenchmarkKey>> planned_keys;
    auto planned = db_.query("SELECT planned FROM session WHERE id = $1", PgParams().add(session));
    if (planned.rows() == 0 || planned.is_null(0, 0)) return planned_keys;
    std::int64_t unknown_id = -1;
    for (auto& key : planned_from_text(planned.text(0, 0))) {
      const auto id = find_benchmark_id(key);
      planned_keys.emplace_back(id ? *id : unknown_id--, std::move(key));
    }
    return planned_keys;
  }

  // What session_benchmarks() would list without an outcome, in its order,
  // counting repeats only of those benchmarks: counting every benchmark's
  // repeats reads all of the session's results, and compare lists sessions
  // several times (the SQLite store does the same).
  std::vector<SessionGap> session_gaps(std::int64_t session) {
    std::vector<SessionGap> gaps;
    std::unordered_map<std::int64_t, std::size_t> by_id;
    auto gap_for = [&](std::int64_t benchmark_id, const std::string& name, const Params& params) -> SessionGap& {
      if (auto it = by_id.find(benchmark_id); it != by_id.end()) return gaps[it->second];
      by_id.emplace(benchmark_id, gaps.size());
      gaps.push_back(SessionGap{name, params, 0});
      return gaps.back();
    };
    std::unordered_set<std::int64_t> settled;
    auto outcomes = db_.query("SELECT benchmark_id FROM outcome WHERE session_id = $1", PgParams().add(session));
    for (int i = 0; i < outcomes.rows(); ++i) settled.insert(outcomes.integer(i, 0));
    for (const auto& [id, key] : planned_with_ids(session)) {
      if (!settled.count(id)) gap_for(id, key.name, key.params);
    }
    auto begun = db_.query(R"sql(
      SELECT b.id, b.name, b.params, COUNT(DISTINCT r.repeat)
      FROM benchmark b JOIN resultclass rc ON rc.benchmark_id = b.id
      JOIN result r ON r.session_id = $1 AND r.resultclass_id = rc.id
      WHERE NOT EXISTS (SELECT 1 FROM outcome o WHERE o.session_id = $1 AND o.benchmark_id = b.id)
      GROUP BY b.id ORDER BY b.name, b.id)sql",
                           PgParams().add(session));
    for (int i = 0; i < begun.rows(); ++i) {
      gap_for(begun.integer(i, 0), begun.text(i, 1), params_from_text(begun.text(i, 2))).repeats_stored =
          static_cast<int>(begun.integer(i, 3));
    }
    return gaps;
  }

  // BEGIN ... COMMIT around `body`, retried when PostgreSQL aborted it for a
  // deadlock or a serialization conflict with another writer.
  template <class Body>
  std::invoke_result_t<Body&> in_transaction(Body&& body) {
    for (int attempt = 1;; ++attempt) {
      db_.execute("BEGIN");
      try {
        auto result = body();
        db_.execute("COMMIT");
        return result;
      } catch (const PgError& error) {
        forget_after_rollback();
        if (!error.retryable() || attempt == kTransactionAttempts) throw;
      } catch (...) {
        forget_after_rollback();
        throw;
      }
    }
  }

  // Ids cached inside a rolled-back transaction may name rows that are gone.
  void forget_after_rollback() {
    const bool was_open = db_.in_transaction();
    db_.rollback_quietly();
    if (was_open && importing_) {
      benchmark_ids_.clear();
      resultclass_ids_.clear();
    }
  }

  // The SUT and swprofile rows, created when new. ON CONFLICT ... DO UPDATE
  // returns the row another writer created meanwhile too.
  std::pair<std::int64_t, std::int64_t> sut_and_swprofile(const Sut& sut, const std::string& swprofile) {
    auto sut_row = db_.query(R"sql(
      INSERT INTO sut(name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name)
      DO UPDATE SET name = excluded.name RETURNING id)sql",
                             PgParams()
                                 .add(sut.name)
                                 .add(sut.hostname)
                                 .add(sut.arch)
                                 .add(sut.cpu_model)
                                 .add(sut.cpu_count)
                                 .add(sut.memory_gib)
                                 .add(sut.product_name));
    auto swprofile_row = db_.query(R"sql(
      INSERT INTO swprofile(name) VALUES ($1)
      ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id)sql",
                                   PgParams().add(swprofile));
    return {sut_row.integer(0, 0), swprofile_row.integer(0, 0)};
  }

  // Session numbers of one (SUT, swprofile) are handed out one writer at a
  // time, until the transaction ends.
  void lock_session_numbers(std::int64_t sut_id, std::int64_t swprofile_id) {
    db_.query("SELECT pg_advisory_xact_lock($1::integer, $2::integer)",
              PgParams().add(static_cast<std::int64_t>(static_cast<std::int32_t>(sut_id)))
                  .add(static_cast<std::int64_t>(static_cast<std::int32_t>(swprofile_id))));
  }

  std::optional<std::int64_t> find_benchmark_id(const BenchmarkKey& benchmark) {
    auto rows = db_.query("SELECT id FROM benchmark WHERE name = $1 AND params = $2",
                          PgParams().add(benchmark.name).add(canonical_params(benchmark.params)));
    if (rows.rows() == 0) return std::nullopt;
    return rows.integer(0, 0);
  }

  std::int64_t benchmark_id_for(const BenchmarkKey& benchmark) {
    std::string key = benchmark.name;
    key += '\0';
    key += canonical_params(benchmark.params);
    if (auto it = benchmark_ids_.find(key); it != benchmark_ids_.end()) return it->second;
    auto row = db_.query(R"sql(
      INSERT INTO benchmark(name, params) VALUES ($1, $2)
      ON CONFLICT (name, params) DO UPDATE SET name = excluded.name RETURNING id)sql",
                         PgParams().add(benchmark.name).add(canonical_params(benchmark.params)));
    const std::int64_t id = row.integer(0, 0);
    benchmark_ids_.emplace(std::move(key), id);
    return id;
  }

  struct KnownClass {
    std::int64_t id;
    Better better;
  };

  // The ids of the repeat's result classes, in sample order. Classes not seen
  // before by this connection are created (or found) in one statement; in a
  // sorted order, so two writers creating overlapping sets never deadlock.
  std::vector<std::int64_t> resultclass_ids_for(std::int64_t benchmark_id, const std::string& benchmark_name,
                                                const std::vector<records::Sample>& samples) {
    auto& known = resultclass_ids_[benchmark_id];
    auto label_key = [](const ResultClass& rc) {
      std::string key = rc.name;
      key += '\0';
      key += rc.unit;
      return key;
    };
    std::vector<std::pair<std::string, const ResultClass*>> missing;
    for (const auto& sample : samples) {
      std::string key = label_key(sample.result_class);
      if (!known.count(key)) missing.emplace_back(std::move(key), &sample.result_class);
    }
    if (!missing.empty()) {
      std::sort(missing.begin(), missing.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      missing.erase(std::unique(missing.begin(), missing.end(),
                                [](const auto& a, const auto& b) { return a.first == b.first; }),
                    missing.end());
      std::vector<std::string> names, units, betters;
      for (const auto& [key, rc] : missing) {
        names.push_back(rc->name);
        units.push_back(rc->unit);
        betters.push_back(std::string(to_string(rc->better)));
      }
      const PgParams params = PgParams()
                                  .add(benchmark_id)
                                  .add(text_array_literal(names))
                                  .add(text_array_literal(units))
                                  .add(text_array_literal(betters));
      // DO NOTHING locks no existing row; the SELECT then sees every class,
      // whoever created it (each statement reads what is committed).
      db_.query(R"sql(
        INSERT INTO resultclass(benchmark_id, name, unit, better)
        SELECT $1, u.name, u.unit, u.better FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY
          AS u(name, unit, better, position) ORDER BY u.position
        ON CONFLICT (benchmark_id, name, unit) DO NOTHING)sql",
                params);
      auto rows = db_.query(R"sql(
        SELECT rc.id, rc.name, rc.unit, rc.better FROM resultclass rc
        JOIN unnest($2::text[], $3::text[]) AS u(name, unit) ON rc.name = u.name AND rc.unit = u.unit
        WHERE rc.benchmark_id = $1)sql",
                            PgParams().add(benchmark_id).add(text_array_literal(names)).add(text_array_literal(units)));
      for (int i = 0; i < rows.rows(); ++i) {
        ResultClass rc{rows.text(i, 1), rows.text(i, 2), Better::Lower};
        known.emplace(label_key(rc), KnownClass{rows.integer(i, 0), better_from_text(rows.text(i, 3))});
      }
    }
    std::vector<std::int64_t> ids;
    ids.reserve(samples.size());
    for (const auto& sample : samples) {
      const auto& rc = sample.result_class;
      const auto it = known.find(label_key(rc));
      if (it == known.end()) throw RunError("store " + url_ + ": result class " + rc.label() + " was not stored");
      if (it->second.better != rc.better) {
        throw RunError("store " + url_ + ": " + benchmark_name + " " + rc.label() + " says " +
                       std::string(to_string(rc.better)) + " is better, but the store has it as " +
                       std::string(to_string(it->second.better)) + " is better");
      }
      ids.push_back(it->second.id);
    }
    return ids;
  }

  static std::string duplicate_description(const std::vector<records::Sample>& samples,
                                           const std::vector<std::int64_t>& class_ids) {
    std::unordered_map<std::int64_t, std::size_t> seen;
    for (std::size_t i = 0; i < class_ids.size(); ++i) {
      if (!seen.emplace(class_ids[i], i).second) return samples[i].result_class.label() + " is already stored";
    }
    return "the repeat is already stored";
  }

  std::string url_;
  PgConnection db_;
  bool writable_;
  bool importing_ = false;  // benchmark and class rows are being made inside a transaction
  std::unordered_map<std::string, std::int64_t> benchmark_ids_;
  std::unordered_map<std::int64_t, std::unordered_map<std::string, KnownClass>> resultclass_ids_;
};

}  // namespace

std::unique_ptr<ResultStore> open_postgres_store(const std::string& url, OpenMode mode) {
  auto store = std::make_unique<PostgresStore>(url, mode != OpenMode::ReadOnly);
  store->initialise(mode);
  return store;
}

}  // namespace kbench::store
