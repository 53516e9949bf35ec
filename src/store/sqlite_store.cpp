// The SQLite resultstore (docs/resultstore.md describes URLs, schema,
// versioning and transactions).
#include "store/sqlite_store.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/errors.h"
#include "common/utc_time.h"
#include "store/schema.h"
#include "store/sqlite_file.h"
#include "store/sqlite_statement.h"
#include "store/store_text.h"

namespace kbench::store {

namespace {

// A REAL column keeps what SQLite cannot read as a number as it came (the
// text 'NaN', a blob, NULL), and sqlite3_column_double reads that as 0.0: a
// measurement of 0 nobody made. kbench never writes one (non-finite values
// are refused on the way in), so the store was edited: refuse to read on.
template <typename Where>
double stored_value(const Statement& results, int column, const std::string& url, std::int64_t session,
                    const Where& result_class, std::int64_t repeat) {
  const int type = results.type(column);
  if (type == SQLITE_FLOAT || type == SQLITE_INTEGER) return results.real(column);
  std::string text = type == SQLITE_TEXT ? results.text(column).substr(0, 40) : "";
  for (char& c : text) c = static_cast<unsigned char>(c) < 0x20 ? '?' : c;  // the message stays one line
  const std::string what = type == SQLITE_TEXT   ? "the text '" + text + "'"
                           : type == SQLITE_BLOB ? "a blob of " + std::to_string(results.bytes(column)) + " bytes"
                                                 : std::string("NULL");
  throw InputError(url + ": session id " + std::to_string(session) + ", " + result_class() + " repeat " +
                   std::to_string(repeat) + ": the stored value is " + what +
                   ", not a number; expected a finite number (the store was edited outside kbench)");
}

namespace fs = std::filesystem;

constexpr std::size_t kInsertBatch = 32;

// "?,?,?" for an IN list of `count` values starting at placeholder `first`.
std::string sqlite_placeholders(std::size_t count, int first) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    if (i) text += ',';
    text += '?' + std::to_string(first + static_cast<int>(i));
  }
  return text;
}

// --- the store ---------------------------------------------------------------

// The versioning logic's view of an SQLite connection.
class SqliteSchemaConnection final : public SchemaConnection {
 public:
  SqliteSchemaConnection(sqlite3* db, const std::string& location) : db_(db), location_(location) {}
  void execute(const std::string& sql) override { exec(db_, location_, sql.c_str()); }
  std::optional<std::string> meta(const std::string& key) override {
    Statement has_table(db_, location_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kbench_meta'");
    if (!has_table.step()) return std::nullopt;
    Statement query(db_, location_, "SELECT value FROM kbench_meta WHERE key = ?1");
    query.bind(1, key);
    if (!query.step()) return std::nullopt;
    return query.text(0);
  }
  void set_meta(const std::string& key, const std::string& value) override {
    Statement upsert(db_, location_, R"sql(
      INSERT INTO kbench_meta(key, value) VALUES (?1, ?2)
      ON CONFLICT(key) DO UPDATE SET value = excluded.value)sql");
    upsert.bind(1, key).bind(2, value).run();
  }

 private:
  sqlite3* db_;
  const std::string& location_;
};

class SqliteStore final : public ResultStore {
 public:
  SqliteStore(std::string url, Connection db, bool writable, int schema_version)
      : url_(std::move(url)), connection_(std::move(db)), db_(connection_.get()), writable_(writable),
        version_(schema_version) {}

  // `found_version`: what inspection saw (0 for a new or empty file).
  void initialise(int found_version) {
    exec(db_, url_, "PRAGMA foreign_keys = ON");
    // Ingest and compare touch every page of large stores; SQLite's 2 MiB
    // default cache makes them re-read pages from the kernel.
    exec(db_, url_, "PRAGMA cache_size = -65536");
    if (!writable_) {
      prepare_reads();
      return;
    }
    // FULL: a committed repeat survives a power cut too, not only a kill -9;
    // one fsync per repeat is cheap next to the repeat itself.
    exec(db_, url_, "PRAGMA synchronous = FULL");
    if (found_version != kSchemaVersion) {
      // The schema (or the migration) and its version appear together or not
      // at all: a run killed here leaves an empty file, which the next run
      // initialises, or the old version, which the next run migrates.
      exec(db_, url_, "BEGIN IMMEDIATE");
      try {
        SqliteSchemaConnection schema(db_, url_);
        create_or_migrate(schema, sqlite_dialect(), url_, utc_now_iso8601());
        exec(db_, url_, "COMMIT");
      } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
      }
    }
    // WAL after the schema exists, so the file never holds a WAL header
    // without kbench's tables. Readers (kbench list/compare) then never block
    // a running kbench run, and it stays a no-op on later opens.
    sqlite3_exec(db_, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    verify_version();
    version_ = kSchemaVersion;
    prepare_reads();
    prepare_writes();
  }

  std::int64_t begin_session(const SessionStart& start) override {
    require_writable();
    Sut sut = start.sut;
    if (sut.name.empty()) sut.name = sut.hostname;
    if (sut.name.empty()) throw InputError("new session: the SUT has neither a name nor a hostname");
    if (start.swprofile.empty()) throw InputError("new session: the swprofile name is empty");
    return in_transaction([&] {
      const std::int64_t sut_id = sut_id_for(sut);
      const std::int64_t swprofile_id = swprofile_id_for(start.swprofile);

      insert_session_.reset()
          .bind(1, sut_id)
          .bind(2, swprofile_id)
          .bind(3, start.started_at.empty() ? utc_now_iso8601() : start.started_at)
          .bind(4, kernel_release_of(start.fingerprint))
          .bind(5, start.fingerprint.is_null() ? std::string("{}") : start.fingerprint.dump())
          .bind(6, planned_text(start.planned))
          .bind(7, start.uid)
          .bind(8, sut_class_of(start.fingerprint));
      if (!insert_session_.step()) fail(db_, url_, "creating the session");
      const std::int64_t session = insert_session_.integer(0);
      insert_session_.reset();
      return session;
    });
  }

  void add_repeat(std::int64_t session, const BenchmarkKey& benchmark, int repeat,
                  const std::vector<records::Sample>& samples) override {
    require_writable();
    if (repeat < 0) {
      throw RunError("store " + url_ + ": " + benchmark.name + ": repeat " + std::to_string(repeat) +
                     " is negative");
    }
    in_transaction([&] {
      require_session(session);
      const std::int64_t benchmark_id = benchmark_id_for(benchmark);
      auto& known = resultclass_ids_[benchmark_id];
      class_ids_.clear();
      for (std::size_t position = 0; position < samples.size(); ++position) {
        const auto& sample = samples[position];
        if (!std::isfinite(sample.value)) {
          throw RunError(benchmark.name + " repeat " + std::to_string(repeat) + ": " +
                         sample.result_class.label() + " is not a finite number; repeat not stored");
        }
        class_ids_.push_back(resultclass_id_for(known, position, benchmark_id, benchmark.name, sample.result_class));
      }
      const auto recorded_at = static_cast<std::int64_t>(std::time(nullptr));
      try {
        // Rows go in batches of kInsertBatch per statement: one statement
        // execution per sample is most of SQLite's cost of an insert.
        std::size_t next = 0;
        insert_results_.reset().bind(1, session).bind(2, repeat).bind(3, recorded_at);
        for (; next + kInsertBatch <= samples.size(); next += kInsertBatch) {
          insert_results_.reset();
          for (std::size_t i = 0; i < kInsertBatch; ++i) {
            insert_results_.bind(static_cast<int>(4 + 2 * i), class_ids_[next + i]);
            insert_results_.bind(static_cast<int>(5 + 2 * i), samples[next + i].value);
          }
          insert_results_.run();
        }
        insert_result_.reset().bind(1, session).bind(3, repeat).bind(5, recorded_at);
        for (; next < samples.size(); ++next) {
          insert_result_.reset().bind(2, class_ids_[next]).bind(4, samples[next].value);
          insert_result_.run();
        }
      } catch (const RunError&) {
        if (insert_results_.last_error() == SQLITE_CONSTRAINT_PRIMARYKEY ||
            insert_result_.last_error() == SQLITE_CONSTRAINT_PRIMARYKEY) {
          throw RunError("store " + url_ + ": " + benchmark.name + " repeat " + std::to_string(repeat) +
                         " of session " + std::to_string(session) + ": " + duplicate_description(samples) +
                         " (twice in one repeat, or the repeat was stored before)");
        }
        throw;
      }
      return 0;
    });
  }

  // Which sample broke the primary key: only on the error path.
  std::string duplicate_description(const std::vector<records::Sample>& samples) const {
    std::unordered_map<std::int64_t, std::size_t> seen;
    for (std::size_t i = 0; i < class_ids_.size(); ++i) {
      if (!seen.emplace(class_ids_[i], i).second) return samples[i].result_class.label() + " is already stored";
    }
    return "the repeat is already stored";
  }

  void record_outcome(std::int64_t session, const BenchmarkKey& benchmark, const Outcome& outcome) override {
    require_writable();
    in_transaction([&] {
      require_session(session);
      const std::int64_t benchmark_id = benchmark_id_for(benchmark);
      upsert_outcome_.reset()
          .bind(1, session)
          .bind(2, benchmark_id)
          .bind(3, to_string(outcome.status))
          .bind(4, outcome.reason)
          .bind(5, outcome.stderr_tail)
          .bind(6, static_cast<std::int64_t>(std::time(nullptr)))
          .run();
      return 0;
    });
  }

  std::vector<SutListing> list_suts(const std::string& glob) override {
    Statement query(db_, url_, R"sql(
      SELECT t.name, t.hostname, t.arch, t.cpu_model, t.cpu_count, t.memory_gib, t.product_name,
             (SELECT COUNT(*) FROM session s WHERE s.sut_id = t.id)
      FROM sut t WHERE t.name GLOB ?1 ORDER BY t.name, t.id)sql");
    query.bind(1, glob_or_all(glob));
    std::vector<SutListing> listing;
    while (query.step()) {
      SutListing row;
      row.sut.name = query.text(0);
      row.sut.hostname = query.text(1);
      row.sut.arch = query.text(2);
      row.sut.cpu_model = query.text(3);
      row.sut.cpu_count = static_cast<int>(query.integer(4));
      row.sut.memory_gib = query.integer(5);
      row.sut.product_name = query.text(6);
      row.sessions = static_cast<int>(query.integer(7));
      listing.push_back(std::move(row));
    }
    return listing;
  }

  std::vector<SwprofileListing> list_swprofiles(const std::string& glob) override {
    Statement query(db_, url_, R"sql(
      SELECT p.id, p.name,
             (SELECT s.kernel_release FROM session s WHERE s.swprofile_id = p.id ORDER BY s.id DESC LIMIT 1),
             (SELECT COUNT(*) FROM session s WHERE s.swprofile_id = p.id),
             (SELECT COUNT(*) FROM session s JOIN result r ON r.session_id = s.id WHERE s.swprofile_id = p.id)
      FROM swprofile p WHERE p.name GLOB ?1 ORDER BY p.name)sql");
    Statement suts(db_, url_, R"sql(
      SELECT DISTINCT t.name FROM session s JOIN sut t ON t.id = s.sut_id
      WHERE s.swprofile_id = ?1 ORDER BY t.name)sql");
    query.bind(1, glob_or_all(glob));
    std::vector<SwprofileListing> listing;
    while (query.step()) {
      SwprofileListing row;
      row.name = query.text(1);
      row.kernel_release = query.text(2);
      row.sessions = static_cast<int>(query.integer(3));
      row.samples = query.integer(4);
      suts.reset().bind(1, query.integer(0));
      while (suts.step()) row.suts.push_back(suts.text(0));
      listing.push_back(std::move(row));
    }
    return listing;
  }

  std::vector<BenchmarkListing> list_benchmarks(const std::string& glob) override {
    // One benchmark name may have run with several parameter sets: listed
    // once, with the union of its result classes.
    Statement classes(db_, url_, R"sql(
      SELECT b.name, rc.name, rc.unit, rc.better
      FROM benchmark b LEFT JOIN resultclass rc ON rc.benchmark_id = b.id
      WHERE b.name GLOB ?1 ORDER BY b.name, rc.id)sql");
    Statement counts(db_, url_, R"sql(
      SELECT b.name, COUNT(*) FROM benchmark b
      JOIN resultclass rc ON rc.benchmark_id = b.id JOIN result r ON r.resultclass_id = rc.id
      WHERE b.name GLOB ?1 GROUP BY b.name)sql");
    classes.bind(1, glob_or_all(glob));
    counts.bind(1, glob_or_all(glob));
    std::vector<BenchmarkListing> listing;
    while (classes.step()) {
      const std::string name = classes.text(0);
      if (listing.empty() || listing.back().name != name) listing.push_back(BenchmarkListing{name, {}, 0});
      if (classes.is_null(1)) continue;
      ResultClass rc{classes.text(1), classes.text(2), better_from_text(classes.text(3))};
      auto& known = listing.back().result_classes;
      const bool seen = std::any_of(known.begin(), known.end(), [&](const ResultClass& other) {
        return other.name == rc.name && other.unit == rc.unit;
      });
      if (!seen) known.push_back(std::move(rc));
    }
    std::unordered_map<std::string, std::int64_t> samples;
    while (counts.step()) samples[counts.text(0)] = counts.integer(1);
    for (auto& row : listing) row.samples = samples[row.name];
    return listing;
  }

  std::vector<OutcomeListing> list_outcomes(const std::vector<std::string>& swprofiles,
                                            OutcomeStatus status) override {
    std::string sql = R"sql(
      SELECT t.name, p.name, s.id, b.name, o.status, o.reason, o.stderr_tail, s.idx
      FROM outcome o JOIN session s ON s.id = o.session_id JOIN sut t ON t.id = s.sut_id
      JOIN swprofile p ON p.id = s.swprofile_id JOIN benchmark b ON b.id = o.benchmark_id
      WHERE o.status = ?1)sql";
    if (!swprofiles.empty()) sql += " AND p.name IN (" + sqlite_placeholders(swprofiles.size(), 2) + ")";
    sql += " ORDER BY s.id, b.name, b.id";
    Statement query(db_, url_, sql);
    query.bind(1, to_string(status));
    for (std::size_t i = 0; i < swprofiles.size(); ++i) query.bind(static_cast<int>(i) + 2, swprofiles[i]);
    std::vector<OutcomeListing> listing;
    while (query.step()) {
      OutcomeListing row;
      row.sut = query.text(0);
      row.swprofile = query.text(1);
      row.session = query.integer(2);
      row.benchmark = query.text(3);
      row.outcome.status = parse_outcome_status(query.text(4)).value_or(OutcomeStatus::Failed);
      row.outcome.reason = query.text(5);
      row.outcome.stderr_tail = query.text(6);
      row.session_number = static_cast<int>(query.integer(7)) + 1;
      listing.push_back(std::move(row));
    }
    return listing;
  }

  bool has_swprofile(const std::string& name) override {
    Statement query(db_, url_, "SELECT 1 FROM swprofile WHERE name = ?1");
    query.bind(1, name);
    return query.step();
  }

  std::vector<SampleRow> samples(const SampleQuery& query) override {
    std::vector<SampleRow> rows;
    for_each_sample(query, [&](const SampleRow& row) { rows.push_back(row); });
    return rows;
  }

  void for_each_sample(const SampleQuery& query, const std::function<void(const SampleRow&)>& sink) override {
    // Sessions and result classes are few and small; results are many. So
    // the filters run on the small tables, and results are read per session
    // in primary-key order (result class, repeat): no join and no sort over
    // the large table, which keeps a compare of a million samples fast.
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
    std::string session_sql = "SELECT s.id, t.name, p.name, s.idx, " + sut_class_sql() + R"sql( AS class
      FROM session s JOIN sut t ON t.id = s.sut_id JOIN swprofile p ON p.id = s.swprofile_id
      WHERE t.name GLOB ?1 AND class GLOB ?2)sql";
    if (!query.swprofiles.empty()) {
      session_sql += " AND p.name IN (" + sqlite_placeholders(query.swprofiles.size(), 3) + ")";
    }
    session_sql += " ORDER BY s.id";
    Statement session_query(db_, url_, session_sql);
    session_query.bind(1, glob_or_all(query.sut_glob)).bind(2, glob_or_all(query.class_glob));
    for (std::size_t i = 0; i < query.swprofiles.size(); ++i) {
      session_query.bind(static_cast<int>(i) + 3, query.swprofiles[i]);
    }
    std::vector<SessionInfo> sessions;
    while (session_query.step()) {
      sessions.push_back({session_query.integer(0), session_query.text(1), session_query.text(2),
                          static_cast<int>(session_query.integer(3)), session_query.text(4)});
    }
    if (sessions.empty()) return;

    Statement class_query(db_, url_, R"sql(
      SELECT rc.id, b.name, b.params, rc.name, rc.unit, rc.better, b.id
      FROM resultclass rc JOIN benchmark b ON b.id = rc.benchmark_id
      WHERE b.name GLOB ?1 AND (rc.name || ' (' || rc.unit || ')') GLOB ?2)sql");
    class_query.bind(1, glob_or_all(query.benchmark_glob)).bind(2, glob_or_all(query.resultclass_glob));
    std::unordered_map<std::int64_t, ClassInfo> classes;
    while (class_query.step()) {
      classes.emplace(class_query.integer(0),
                      ClassInfo{class_query.integer(6), class_query.text(1), params_from_text(class_query.text(2)),
                                ResultClass{class_query.text(3), class_query.text(4),
                                            better_from_text(class_query.text(5))}});
    }
    if (classes.empty()) return;

    Statement results(db_, url_,
                      "SELECT resultclass_id, repeat, value FROM result WHERE session_id = ?1 "
                      "ORDER BY resultclass_id, repeat");
    Statement settled(db_, url_, "SELECT benchmark_id FROM outcome WHERE session_id = ?1 AND status = 'ok'");
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
        settled.reset().bind(1, session.id);
        while (settled.step()) ok_benchmarks[settled.integer(0)] = true;
      }
      results.reset().bind(1, session.id);
      std::int64_t current_class = -1;
      const ClassInfo* info = nullptr;
      while (results.step()) {
        const std::int64_t class_id = results.integer(0);
        if (class_id != current_class) {
          current_class = class_id;
          const auto it = classes.find(class_id);
          info = it == classes.end() ? nullptr : &it->second;
          if (info && query.settled_only && !ok_benchmarks.count(info->benchmark_id)) info = nullptr;
          // Copied once per class, not per sample.
          if (info) {
            row.benchmark = info->benchmark;
            row.params = info->params;
            row.result_class = info->result_class;
          }
        }
        if (!info) continue;
        row.repeat = static_cast<int>(results.integer(1));
        row.value = stored_value(
            results, 2, url_, session.id, [&] { return row.benchmark + " " + row.result_class.label(); }, row.repeat);
        sink(row);
      }
    }
  }

  std::vector<SessionListing> list_sessions(const std::vector<std::string>& swprofiles) override {
    std::string sql = session_listing_sql();
    if (!swprofiles.empty()) sql += " WHERE p.name IN (" + sqlite_placeholders(swprofiles.size(), 1) + ")";
    sql += " ORDER BY s.id";
    Statement query(db_, url_, sql);
    for (std::size_t i = 0; i < swprofiles.size(); ++i) query.bind(static_cast<int>(i) + 1, swprofiles[i]);
    std::vector<SessionListing> listing;
    while (query.step()) listing.push_back(session_from_row(query, /*with_fingerprint=*/false));
    return listing;
  }

  std::optional<SessionListing> session(std::int64_t session) override {
    Statement query(db_, url_, session_listing_sql() + " WHERE s.id = ?1");
    query.bind(1, session);
    if (!query.step()) return std::nullopt;
    return session_from_row(query, /*with_fingerprint=*/true);
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
    // Planned first, in plan order.
    for (const auto& [id, key] : planned_with_ids(session)) row_for(id, key.name, key.params);
    Statement outcomes(db_, url_, R"sql(
      SELECT b.id, b.name, b.params, o.status, o.reason, o.stderr_tail
      FROM outcome o JOIN benchmark b ON b.id = o.benchmark_id WHERE o.session_id = ?1 ORDER BY b.name, b.id)sql");
    outcomes.bind(1, session);
    while (outcomes.step()) {
      auto& row = row_for(outcomes.integer(0), outcomes.text(1), params_from_text(outcomes.text(2)));
      row.outcome = Outcome{parse_outcome_status(outcomes.text(3)).value_or(OutcomeStatus::Failed),
                            outcomes.text(4), outcomes.text(5)};
    }
    Statement stored(db_, url_, R"sql(
      SELECT b.id, b.name, b.params, COUNT(DISTINCT r.repeat), COUNT(*)
      FROM result r JOIN resultclass rc ON rc.id = r.resultclass_id JOIN benchmark b ON b.id = rc.benchmark_id
      WHERE r.session_id = ?1 GROUP BY b.id ORDER BY b.name, b.id)sql");
    stored.bind(1, session);
    while (stored.step()) {
      auto& row = row_for(stored.integer(0), stored.text(1), params_from_text(stored.text(2)));
      row.repeats = static_cast<int>(stored.integer(3));
      row.samples = stored.integer(4);
    }
    return rows;
  }

  void finish_session(std::int64_t session, const nlohmann::json& at_end) override {
    require_writable();
    in_transaction([&] {
      require_session(session);
      Statement update(db_, url_, "UPDATE session SET finished_at = ?2 WHERE id = ?1");
      update.bind(1, session).bind(2, utc_now_iso8601()).run();
      if (at_end.is_object()) {
        for (const auto& [key, value] : at_end.items()) {
          // The key is a JSON path member: quoted, so no character of it is syntax.
          Statement set(db_, url_, "UPDATE session SET fingerprint = json_set(fingerprint, ?2, json(?3)) WHERE id = ?1");
          set.bind(1, session).bind(2, "$." + nlohmann::json(key).dump()).bind(3, value.dump()).run();
        }
      }
      return 0;
    });
  }

  void delete_session(std::int64_t session) override {
    require_writable();
    in_transaction([&] {
      require_session(session);
      for (const char* sql : {"DELETE FROM result WHERE session_id = ?1", "DELETE FROM outcome WHERE session_id = ?1",
                              "DELETE FROM session WHERE id = ?1"}) {
        Statement statement(db_, url_, sql);
        statement.bind(1, session).run();
      }
      return 0;
    });
  }

  std::vector<int> stored_repeats(std::int64_t session, const BenchmarkKey& benchmark) override {
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return {};
    Statement query(db_, url_, R"sql(
      SELECT DISTINCT r.repeat FROM result r JOIN resultclass rc ON rc.id = r.resultclass_id
      WHERE r.session_id = ?1 AND rc.benchmark_id = ?2 ORDER BY r.repeat)sql");
    query.bind(1, session).bind(2, *benchmark_id);
    std::vector<int> repeats;
    while (query.step()) repeats.push_back(static_cast<int>(query.integer(0)));
    return repeats;
  }

  std::optional<Outcome> outcome_of(std::int64_t session, const BenchmarkKey& benchmark) override {
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return std::nullopt;
    Statement query(db_, url_,
                    "SELECT status, reason, stderr_tail FROM outcome WHERE session_id = ?1 AND benchmark_id = ?2");
    query.bind(1, session).bind(2, *benchmark_id);
    if (!query.step()) return std::nullopt;
    return Outcome{parse_outcome_status(query.text(0)).value_or(OutcomeStatus::Failed), query.text(1),
                   query.text(2)};
  }

  std::optional<nlohmann::json> latest_plan(const std::string& plan_key,
                                            const std::vector<std::string>& swprofiles) override {
    std::string sql = R"sql(
      SELECT json_extract(s.fingerprint, '$.plan') FROM session s JOIN swprofile w ON w.id = s.swprofile_id
      WHERE json_extract(s.fingerprint, '$.plan.key') = ?1)sql";
    if (!swprofiles.empty()) sql += " AND w.name IN (" + sqlite_placeholders(swprofiles.size(), 2) + ")";
    sql += " ORDER BY s.id DESC LIMIT 1";
    Statement query(db_, url_, sql);
    query.bind(1, plan_key);
    for (std::size_t i = 0; i < swprofiles.size(); ++i) query.bind(static_cast<int>(i) + 2, swprofiles[i]);
    if (!query.step()) return std::nullopt;
    auto plan = nlohmann::json::parse(query.text(0), nullptr, /*allow_exceptions=*/false);
    if (!plan.is_object()) return std::nullopt;
    return plan;
  }

  std::optional<std::int64_t> find_plan_session(const std::string& swprofile, const std::string& plan_key,
                                                const std::string& run, int plan_session) override {
    Statement query(db_, url_, R"sql(
      SELECT s.id FROM session s JOIN swprofile w ON w.id = s.swprofile_id
      WHERE w.name = ?1 AND json_extract(s.fingerprint, '$.plan.key') = ?2
        AND json_extract(s.fingerprint, '$.plan.run') = ?3
        AND json_extract(s.fingerprint, '$.plan.session') = ?4
      ORDER BY s.id DESC LIMIT 1)sql");
    query.bind(1, swprofile).bind(2, plan_key).bind(3, run).bind(4, static_cast<std::int64_t>(plan_session));
    if (!query.step()) return std::nullopt;
    return query.integer(0);
  }

  void discard_benchmark(std::int64_t session, const BenchmarkKey& benchmark) override {
    require_writable();
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return;
    in_transaction([&] {
      Statement results(db_, url_, R"sql(
        DELETE FROM result WHERE session_id = ?1
        AND resultclass_id IN (SELECT id FROM resultclass WHERE benchmark_id = ?2))sql");
      results.bind(1, session).bind(2, *benchmark_id).run();
      Statement outcome(db_, url_, "DELETE FROM outcome WHERE session_id = ?1 AND benchmark_id = ?2");
      outcome.bind(1, session).bind(2, *benchmark_id).run();
      return 0;
    });
  }

  std::int64_t record_boot(const BootRecord& boot) override {
    require_writable();
    return in_transaction([&] {
      Statement insert(db_, url_, R"sql(
        INSERT INTO boot (sut, swprofile, plan_key, run, plan_session, number, method, started_at, seconds, ok,
                          power_cycled, release, reason, console_tail, session_id)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, NULLIF(?15, 0)))sql");
      insert.bind(1, boot.sut).bind(2, boot.swprofile).bind(3, boot.plan_key).bind(4, boot.run)
          .bind(5, boot.plan_session).bind(6, boot.number).bind(7, boot.method).bind(8, boot.started_at)
          .bind(9, boot.seconds).bind(10, boot.ok ? 1 : 0).bind(11, boot.power_cycled ? 1 : 0).bind(12, boot.release)
          .bind(13, boot.reason).bind(14, boot.console_tail).bind(15, boot.session.value_or(0))
          .run();
      return static_cast<std::int64_t>(sqlite3_last_insert_rowid(db_));
    });
  }

  std::vector<BootRecord> list_boots(const std::string& plan_key, const std::string& run) override {
    if (version_ < 3) return {};  // read-only, older than boots: it has none
    Statement query(db_, url_, R"sql(
      SELECT id, sut, swprofile, plan_key, run, plan_session, number, method, started_at, seconds, ok, power_cycled,
             release, reason, console_tail, session_id
      FROM boot WHERE (?1 = '' OR plan_key = ?1) AND (?2 = '' OR run = ?2) ORDER BY id)sql");
    query.bind(1, plan_key).bind(2, run);
    std::vector<BootRecord> boots;
    while (query.step()) {
      BootRecord boot;
      boot.id = query.integer(0);
      boot.sut = query.text(1);
      boot.swprofile = query.text(2);
      boot.plan_key = query.text(3);
      boot.run = query.text(4);
      boot.plan_session = static_cast<int>(query.integer(5));
      boot.number = static_cast<int>(query.integer(6));
      boot.method = query.text(7);
      boot.started_at = query.text(8);
      boot.seconds = query.real(9);
      boot.ok = query.integer(10) != 0;
      boot.power_cycled = query.integer(11) != 0;
      boot.release = query.text(12);
      boot.reason = query.text(13);
      boot.console_tail = query.text(14);
      if (!query.is_null(15)) boot.session = query.integer(15);
      boots.push_back(std::move(boot));
    }
    return boots;
  }

  std::int64_t add_log(const std::string& kind, const std::string& name, const std::string& text) override {
    require_writable();
    return in_transaction([&] {
      Statement insert(db_, url_, "INSERT INTO log (kind, name, created_utc, text) VALUES (?1, ?2, ?3, ?4)");
      insert.bind(1, kind).bind(2, name).bind(3, utc_now_iso8601()).bind(4, text).run();
      return static_cast<std::int64_t>(sqlite3_last_insert_rowid(db_));
    });
  }

  std::vector<StoredLog> logs(const std::string& kind) override {
    if (version_ < 5) return {};  // read-only, older than logs: it has none
    Statement query(db_, url_,
                    "SELECT id, kind, name, created_utc, text FROM log WHERE (?1 = '' OR kind = ?1) ORDER BY id");
    query.bind(1, kind);
    std::vector<StoredLog> found;
    while (query.step()) {
      found.push_back({query.integer(0), query.text(1), query.text(2), query.text(3), query.text(4)});
    }
    return found;
  }

  void discard_outcome(std::int64_t session, const BenchmarkKey& benchmark) override {
    require_writable();
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return;
    in_transaction([&] {
      Statement outcome(db_, url_, "DELETE FROM outcome WHERE session_id = ?1 AND benchmark_id = ?2");
      outcome.bind(1, session).bind(2, *benchmark_id).run();
      return 0;
    });
  }

  std::optional<std::int64_t> find_session_by_uid(const std::string& uid) override {
    if (version_ < 4 || uid.empty()) return std::nullopt;
    Statement query(db_, url_, "SELECT id FROM session WHERE uid = ?1");
    query.bind(1, uid);
    if (!query.step()) return std::nullopt;
    return query.integer(0);
  }

  SessionContent read_session(std::int64_t session) override {
    const char* v2 = version_ >= 2 ? "s.planned, s.finished_at" : "NULL, s.started_at";
    Statement head(db_, url_,
                   std::string("SELECT ") + uid_sql() + R"sql(, t.name, t.hostname, t.arch, t.cpu_model, t.cpu_count,
                     t.memory_gib, t.product_name, p.name, s.idx, s.started_at, s.kernel_release, s.fingerprint, )sql" +
                       v2 + R"sql( FROM session s JOIN sut t ON t.id = s.sut_id
                     JOIN swprofile p ON p.id = s.swprofile_id WHERE s.id = ?1)sql");
    head.bind(1, session);
    if (!head.step()) throw RunError("store " + url_ + ": session " + std::to_string(session) + " does not exist");
    SessionContent content;
    content.uid = head.text(0);
    content.sut = Sut{head.text(1), head.text(2), head.text(3), head.text(4), static_cast<int>(head.integer(5)),
                      head.integer(6), head.text(7)};
    content.swprofile = head.text(8);
    content.session_index = static_cast<int>(head.integer(9));
    content.started_at = head.text(10);
    content.kernel_release = head.text(11);
    content.fingerprint = nlohmann::json::parse(head.text(12), nullptr, /*allow_exceptions=*/false);
    if (version_ >= 2 && !head.is_null(13)) content.planned = planned_from_text(head.text(13));
    if (!head.is_null(14)) content.finished_at = head.text(14);

    Statement outcomes(db_, url_, R"sql(
      SELECT b.name, b.params, o.status, o.reason, o.stderr_tail, o.recorded_at
      FROM outcome o JOIN benchmark b ON b.id = o.benchmark_id WHERE o.session_id = ?1 ORDER BY b.name, b.params)sql");
    outcomes.bind(1, session);
    while (outcomes.step()) {
      content.outcomes.push_back(
          StoredOutcome{BenchmarkKey{outcomes.text(0), params_from_text(outcomes.text(1))},
                        Outcome{parse_outcome_status(outcomes.text(2)).value_or(OutcomeStatus::Failed),
                                outcomes.text(3), outcomes.text(4)},
                        outcomes.integer(5)});
    }
    // Classes are few: read them once, ordered as the interface orders
    // results, then the results in primary-key order (class, repeat: no join
    // or sort over the large table), each into its class's place.
    struct ClassRow {
      BenchmarkKey benchmark;
      ResultClass result_class;
      std::int64_t id;
    };
    std::vector<ClassRow> classes;
    Statement class_query(db_, url_, R"sql(
      SELECT rc.id, b.name, b.params, rc.name, rc.unit, rc.better FROM resultclass rc
      JOIN benchmark b ON b.id = rc.benchmark_id
      WHERE rc.id IN (SELECT DISTINCT resultclass_id FROM result WHERE session_id = ?1))sql");
    class_query.bind(1, session);
    while (class_query.step()) {
      classes.push_back(ClassRow{BenchmarkKey{class_query.text(1), params_from_text(class_query.text(2))},
                                 ResultClass{class_query.text(3), class_query.text(4),
                                             better_from_text(class_query.text(5))},
                                 class_query.integer(0)});
    }
    std::sort(classes.begin(), classes.end(), [](const ClassRow& a, const ClassRow& b) {
      return std::tie(a.benchmark.name, a.benchmark.params, a.result_class.name, a.result_class.unit) <
             std::tie(b.benchmark.name, b.benchmark.params, b.result_class.name, b.result_class.unit);
    });
    std::unordered_map<std::int64_t, std::size_t> rank;
    for (std::size_t i = 0; i < classes.size(); ++i) rank.emplace(classes[i].id, i);
    std::vector<std::vector<StoredResult>> by_class(classes.size());
    Statement results(db_, url_,
                      "SELECT resultclass_id, repeat, value, recorded_at FROM result WHERE session_id = ?1 "
                      "ORDER BY resultclass_id, repeat");
    results.bind(1, session);
    std::int64_t current = -1;
    std::vector<StoredResult>* bucket = nullptr;
    const ClassRow* info = nullptr;
    std::size_t total = 0;
    while (results.step()) {
      const std::int64_t class_id = results.integer(0);
      if (class_id != current) {
        current = class_id;
        const std::size_t index = rank.at(class_id);
        bucket = &by_class[index];
        info = &classes[index];
      }
      bucket->push_back(StoredResult{
          info->benchmark, info->result_class, static_cast<int>(results.integer(1)),
          stored_value(
              results, 2, url_, session, [&] { return info->benchmark.name + " " + info->result_class.label(); },
              results.integer(1)),
          results.integer(3)});
      ++total;
    }
    content.results.reserve(total);
    for (auto& bucket_rows : by_class) {
      for (auto& row : bucket_rows) content.results.push_back(std::move(row));
    }
    return content;
  }

  std::int64_t import_session(const SessionContent& content) override {
    require_writable();
    if (content.swprofile.empty()) throw InputError("imported session: the swprofile name is empty");
    if (content.sut.name.empty()) throw InputError("imported session: the SUT has no name");
    return in_transaction([&] {
      const std::int64_t sut_id = sut_id_for(content.sut);
      const std::int64_t swprofile_id = swprofile_id_for(content.swprofile);

      import_session_.reset()
          .bind(1, sut_id)
          .bind(2, swprofile_id)
          .bind(3, content.session_index)
          .bind(4, content.started_at)
          .bind(5, content.kernel_release)
          .bind(6, content.fingerprint.is_null() ? std::string("{}") : content.fingerprint.dump())
          .bind(7, content.planned ? planned_text(*content.planned) : std::string())
          .bind(8, content.uid)
          .bind(9, sut_class_of(content.fingerprint))
          .bind(10, content.finished_at.value_or(""));
      if (!import_session_.step()) fail(db_, url_, "creating the session " + content.uid);
      const std::int64_t session = import_session_.integer(0);
      import_session_.reset();

      for (const auto& stored : content.outcomes) {
        import_outcome_.reset()
            .bind(1, session)
            .bind(2, benchmark_id_for(stored.benchmark))
            .bind(3, to_string(stored.outcome.status))
            .bind(4, stored.outcome.reason)
            .bind(5, stored.outcome.stderr_tail)
            .bind(6, stored.recorded_at)
            .run();
      }

      // Consecutive results share their class: look it up when it changes.
      const StoredResult* previous = nullptr;
      std::int64_t class_id = 0;
      std::vector<std::int64_t> class_ids;
      class_ids.reserve(content.results.size());
      for (const auto& result : content.results) {
        if (!std::isfinite(result.value)) {
          throw RunError("store " + url_ + ": session " + content.uid + ": " + result.benchmark.name + " " +
                         result.result_class.label() + " is not a finite number");
        }
        if (!previous || previous->benchmark.name != result.benchmark.name ||
            previous->benchmark.params != result.benchmark.params ||
            !(previous->result_class == result.result_class)) {
          const std::int64_t benchmark_id = benchmark_id_for(result.benchmark);
          class_id = resultclass_id_for(resultclass_ids_[benchmark_id], 0, benchmark_id, result.benchmark.name,
                                        result.result_class);
          previous = &result;
        }
        class_ids.push_back(class_id);
      }
      std::size_t next = 0;
      import_results_.reset().bind(1, session);
      for (; next + kInsertBatch <= content.results.size(); next += kInsertBatch) {
        import_results_.reset();
        for (std::size_t i = 0; i < kInsertBatch; ++i) {
          const auto& result = content.results[next + i];
          const int base = static_cast<int>(2 + 4 * i);
          import_results_.bind(base, class_ids[next + i])
              .bind(base + 1, result.repeat)
              .bind(base + 2, result.value)
              .bind(base + 3, result.recorded_at);
        }
        import_results_.run();
      }
      insert_result_.reset().bind(1, session);
      for (; next < content.results.size(); ++next) {
        const auto& result = content.results[next];
        insert_result_.reset()
            .bind(2, class_ids[next])
            .bind(3, result.repeat)
            .bind(4, result.value)
            .bind(5, result.recorded_at)
            .run();
      }
      return session;
    });
  }

  std::vector<std::string> integrity_check() override {
    std::vector<std::string> problems;
    Statement integrity(db_, url_, "PRAGMA integrity_check");
    while (integrity.step()) {
      std::string line = integrity.text(0);
      if (line != "ok") problems.push_back(std::move(line));
    }
    Statement foreign_keys(db_, url_, "PRAGMA foreign_key_check");
    while (foreign_keys.step()) {
      problems.push_back("table " + foreign_keys.text(0) +
                         (foreign_keys.is_null(1) ? std::string() : " row " + foreign_keys.text(1)) +
                         " refers to a missing row of table " + foreign_keys.text(2));
    }
    return problems;
  }

  const std::string& location() const override { return url_; }

 private:
  void require_writable() const {
    if (!writable_) throw RunError("store " + url_ + ": opened read-only; this command does not write");
  }

  // Columns 0-8 of a SessionListing; version-1 stores (read-only, not yet
  // migrated) have no plan and count as finished, as the migration does.
  std::string session_listing_sql() const {
    const char* v2 = version_ >= 2 ? "s.planned, s.finished_at IS NOT NULL" : "NULL, 1";
    // Column 6 (planned) is read again by session_benchmarks(); it is in the
    // row so the column numbers stay those of the newest schema.
    return std::string("SELECT s.id, t.name, p.name, s.idx, s.started_at, s.kernel_release, ") + v2 +
           ", (SELECT COUNT(*) FROM result r WHERE r.session_id = s.id), s.fingerprint, " + uid_sql() + ", " +
           sut_class_sql() + " FROM session s JOIN sut t ON t.id = s.sut_id JOIN swprofile p ON p.id = s.swprofile_id";
  }

  // Before version 4 (a read-only store not yet migrated) sessions have no
  // uid, and their class is read from the fingerprint as the migration would.
  std::string uid_sql() const { return version_ >= 4 ? "s.uid" : "''"; }
  std::string sut_class_sql() const {
    return version_ >= 4 ? "s.sut_class"
                         : "CASE WHEN json_valid(s.fingerprint) AND json_type(s.fingerprint, '$.sut_class') = 'text' "
                           "THEN json_extract(s.fingerprint, '$.sut_class') ELSE '' END";
  }

  SessionListing session_from_row(const Statement& row, bool with_fingerprint) {
    SessionListing listing;
    listing.id = row.integer(0);
    listing.sut = row.text(1);
    listing.swprofile = row.text(2);
    listing.session_index = static_cast<int>(row.integer(3));
    listing.started_at = row.text(4);
    listing.kernel_release = row.text(5);
    listing.finished = row.integer(7) != 0;
    listing.samples = row.integer(8);
    listing.uid = row.text(10);
    listing.sut_class = row.text(11);
    if (with_fingerprint) {
      listing.fingerprint = nlohmann::json::parse(row.text(9), nullptr, /*allow_exceptions=*/false);
    }
    listing.gaps = session_gaps(listing.id);
    return listing;
  }

  // What session_benchmarks() lists without an outcome, in the same order
  // (planned first, in plan order, then begun ones by name), but counting
  // repeats only of benchmarks without an outcome. Counting every
  // benchmark's repeats reads all of the session's results; compare lists
  // sessions several times, so on a large store that was most of its time.
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
    Statement outcomes(db_, url_, "SELECT benchmark_id FROM outcome WHERE session_id = ?1");
    outcomes.bind(1, session);
    while (outcomes.step()) settled.insert(outcomes.integer(0));
    for (const auto& [id, key] : planned_with_ids(session)) {
      if (!settled.count(id)) gap_for(id, key.name, key.params);
    }
    // CROSS JOIN fixes the loop order: the few benchmarks without an outcome
    // outside, then their result classes, then the session's results of each
    // class by primary key; never a scan of all the session's results.
    Statement begun(db_, url_, R"sql(
      SELECT b.id, b.name, b.params, COUNT(DISTINCT r.repeat)
      FROM benchmark b CROSS JOIN resultclass rc CROSS JOIN result r
      WHERE rc.benchmark_id = b.id AND r.session_id = ?1 AND r.resultclass_id = rc.id
        AND NOT EXISTS (SELECT 1 FROM outcome o WHERE o.session_id = ?1 AND o.benchmark_id = b.id)
      GROUP BY b.id ORDER BY b.name, b.id)sql");
    begun.bind(1, session);
    while (begun.step()) {
      gap_for(begun.integer(0), begun.text(1), params_from_text(begun.text(2))).repeats_stored =
          static_cast<int>(begun.integer(3));
    }
    return gaps;
  }

  // The session's planned benchmarks in plan order, each with its benchmark
  // row's id; a planned benchmark that never started may have no row yet and
  // gets a negative id of its own.
  std::vector<std::pair<std::int64_t, BenchmarkKey>> planned_with_ids(std::int64_t session) {
    std::vector<std::pair<std::int64_t, BenchmarkKey>> planned_keys;
    if (version_ < 2) return planned_keys;
    Statement planned(db_, url_, "SELECT planned FROM session WHERE id = ?1");
    planned.bind(1, session);
    if (!planned.step() || planned.is_null(0)) return planned_keys;
    std::int64_t unknown_id = -1;
    for (auto& key : planned_from_text(planned.text(0))) {
      const auto id = find_benchmark_id(key);
      planned_keys.emplace_back(id ? *id : unknown_id--, std::move(key));
    }
    return planned_keys;
  }

  void prepare_reads() {
    session_exists_ = Statement(db_, url_, "SELECT 1 FROM session WHERE id = ?1");
    find_benchmark_ = Statement(db_, url_, "SELECT id FROM benchmark WHERE name = ?1 AND params = ?2");
  }

  void prepare_writes() {
    upsert_sut_ = Statement(db_, url_, R"sql(
      INSERT INTO sut(name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
      ON CONFLICT DO UPDATE SET name = excluded.name RETURNING id)sql");
    upsert_swprofile_ = Statement(db_, url_, R"sql(
      INSERT INTO swprofile(name) VALUES (?1)
      ON CONFLICT DO UPDATE SET name = excluded.name RETURNING id)sql");
    insert_session_ = Statement(db_, url_, R"sql(
      INSERT INTO session(sut_id, swprofile_id, idx, started_at, kernel_release, fingerprint, planned, uid, sut_class)
      VALUES (?1, ?2,
              (SELECT COALESCE(MAX(idx) + 1, 0) FROM session WHERE sut_id = ?1 AND swprofile_id = ?2),
              ?3, ?4, ?5, ?6, COALESCE(NULLIF(?7, ''), lower(hex(randomblob(16)))), ?8)
      RETURNING id)sql");
    // A merged session keeps its number unless this store already has that
    // number for the (SUT, swprofile); then it takes the next free one.
    import_session_ = Statement(db_, url_, R"sql(
      INSERT INTO session(sut_id, swprofile_id, idx, started_at, kernel_release, fingerprint, planned, uid, sut_class,
                          finished_at)
      VALUES (?1, ?2,
              CASE WHEN EXISTS (SELECT 1 FROM session WHERE sut_id = ?1 AND swprofile_id = ?2 AND idx = ?3) THEN
                (SELECT MAX(idx) + 1 FROM session WHERE sut_id = ?1 AND swprofile_id = ?2) ELSE ?3 END,
              ?4, ?5, ?6, NULLIF(?7, ''), ?8, ?9, NULLIF(?10, ''))
      RETURNING id)sql");
    std::string import_sql = "INSERT INTO result(session_id, resultclass_id, repeat, value, recorded_at) VALUES ";
    for (std::size_t i = 0; i < kInsertBatch; ++i) {
      if (i) import_sql += ", ";
      const auto p = [&](int k) { return "?" + std::to_string(2 + 4 * i + k); };
      import_sql += "(?1, " + p(0) + ", " + p(1) + ", " + p(2) + ", " + p(3) + ")";
    }
    import_results_ = Statement(db_, url_, import_sql);
    import_outcome_ = Statement(db_, url_, R"sql(
      INSERT INTO outcome(session_id, benchmark_id, status, reason, stderr_tail, recorded_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6))sql");
    upsert_benchmark_ = Statement(db_, url_, R"sql(
      INSERT INTO benchmark(name, params) VALUES (?1, ?2)
      ON CONFLICT DO UPDATE SET name = excluded.name RETURNING id)sql");
    // DO UPDATE keeps the stored direction, so RETURNING tells a conflict apart.
    upsert_resultclass_ = Statement(db_, url_, R"sql(
      INSERT INTO resultclass(benchmark_id, name, unit, better) VALUES (?1, ?2, ?3, ?4)
      ON CONFLICT DO UPDATE SET better = better RETURNING id, better)sql");
    std::string batch_sql =
        "INSERT INTO result(session_id, resultclass_id, repeat, value, recorded_at) VALUES ";
    for (std::size_t i = 0; i < kInsertBatch; ++i) {
      if (i) batch_sql += ", ";
      batch_sql += "(?1, ?" + std::to_string(4 + 2 * i) + ", ?2, ?" + std::to_string(5 + 2 * i) + ", ?3)";
    }
    insert_results_ = Statement(db_, url_, batch_sql);
    insert_result_ = Statement(db_, url_, R"sql(
      INSERT INTO result(session_id, resultclass_id, repeat, value, recorded_at)
      VALUES (?1, ?2, ?3, ?4, ?5))sql");
    upsert_outcome_ = Statement(db_, url_, R"sql(
      INSERT INTO outcome(session_id, benchmark_id, status, reason, stderr_tail, recorded_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6)
      ON CONFLICT DO UPDATE SET status = excluded.status, reason = excluded.reason,
                                stderr_tail = excluded.stderr_tail, recorded_at = excluded.recorded_at)sql");
  }

  void verify_version() {
    Statement query(db_, url_, "SELECT value FROM kbench_meta WHERE key = 'schema_version'");
    const std::string version = query.step() ? query.text(0) : "";
    if (version != std::to_string(kSchemaVersion)) {
      // inspect() accepted it, so only a concurrent writer of another
      // version gets here; refuse rather than mix schemas.
      throw InputError("store " + url_ + " has schema version '" + version + "', but this kbench writes version " +
                       std::to_string(kSchemaVersion));
    }
  }

  // One BEGIN IMMEDIATE ... COMMIT around `body`; any exception rolls the
  // whole transaction back and forgets cached ids that may name rows the
  // rollback removed.
  template <class Body>
  std::invoke_result_t<Body&> in_transaction(Body&& body) {
    exec(db_, url_, "BEGIN IMMEDIATE");
    try {
      auto result = body();
      exec(db_, url_, "COMMIT");
      return result;
    } catch (...) {
      if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      benchmark_ids_.clear();
      resultclass_ids_.clear();
      throw;
    }
  }

  // The rows of a SUT and a swprofile, created when new (inside the caller's transaction).
  std::int64_t sut_id_for(const Sut& sut) {
    upsert_sut_.reset()
        .bind(1, sut.name)
        .bind(2, sut.hostname)
        .bind(3, sut.arch)
        .bind(4, sut.cpu_model)
        .bind(5, sut.cpu_count)
        .bind(6, sut.memory_gib)
        .bind(7, sut.product_name);
    if (!upsert_sut_.step()) fail(db_, url_, "storing the SUT");
    const std::int64_t id = upsert_sut_.integer(0);
    upsert_sut_.reset();
    return id;
  }

  std::int64_t swprofile_id_for(const std::string& name) {
    upsert_swprofile_.reset().bind(1, name);
    if (!upsert_swprofile_.step()) fail(db_, url_, "storing the swprofile");
    const std::int64_t id = upsert_swprofile_.integer(0);
    upsert_swprofile_.reset();
    return id;
  }

  void require_session(std::int64_t session) {
    session_exists_.reset().bind(1, session);
    const bool exists = session_exists_.step();
    session_exists_.reset();
    if (!exists) throw RunError("store " + url_ + ": session " + std::to_string(session) + " does not exist");
  }

  std::optional<std::int64_t> find_benchmark_id(const BenchmarkKey& benchmark) {
    find_benchmark_.reset().bind(1, benchmark.name).bind(2, canonical_params(benchmark.params));
    std::optional<std::int64_t> id;
    if (find_benchmark_.step()) id = find_benchmark_.integer(0);
    find_benchmark_.reset();
    return id;
  }

  std::int64_t benchmark_id_for(const BenchmarkKey& benchmark) {
    std::string key = benchmark.name;
    key += '\0';
    key += canonical_params(benchmark.params);
    if (auto it = benchmark_ids_.find(key); it != benchmark_ids_.end()) return it->second;
    upsert_benchmark_.reset().bind(1, benchmark.name).bind(2, canonical_params(benchmark.params));
    if (!upsert_benchmark_.step()) fail(db_, url_, "storing benchmark " + benchmark.name);
    const std::int64_t id = upsert_benchmark_.integer(0);
    upsert_benchmark_.reset();
    benchmark_ids_.emplace(std::move(key), id);
    return id;
  }

  // Result classes of one benchmark already in the store. A benchmark
  // reports its classes in the same order every repeat, so the class at
  // position i is first looked for where it was last time: no hashing on
  // the ingest path, which runs once per stored sample.
  struct KnownClasses {
    struct Entry {
      std::string name, unit;
      std::int64_t id;
      Better better;
    };
    std::vector<Entry> entries;
    std::unordered_map<std::string, std::size_t> by_label;  // name '\0' unit -> entries index
    std::vector<std::size_t> last_order;                     // position in repeat -> entries index
  };

  std::int64_t resultclass_id_for(KnownClasses& known, std::size_t position, std::int64_t benchmark_id,
                                  const std::string& benchmark_name, const ResultClass& rc) {
    std::size_t index = known.entries.size();
    if (position < known.last_order.size()) {
      const auto& guess = known.entries[known.last_order[position]];
      if (guess.name == rc.name && guess.unit == rc.unit) index = known.last_order[position];
    }
    if (index == known.entries.size()) {
      std::string key = rc.name;
      key += '\0';
      key += rc.unit;
      if (auto it = known.by_label.find(key); it != known.by_label.end()) {
        index = it->second;
      } else {
        upsert_resultclass_.reset()
            .bind(1, benchmark_id)
            .bind(2, rc.name)
            .bind(3, rc.unit)
            .bind(4, to_string(rc.better));
        if (!upsert_resultclass_.step()) fail(db_, url_, "storing result class " + rc.label());
        const std::int64_t id = upsert_resultclass_.integer(0);
        const Better stored = better_from_text(upsert_resultclass_.text(1));
        upsert_resultclass_.reset();
        known.entries.push_back({rc.name, rc.unit, id, stored});
        known.by_label.emplace(std::move(key), index);
      }
      if (known.last_order.size() <= position) known.last_order.resize(position + 1);
      known.last_order[position] = index;
    }
    const auto& entry = known.entries[index];
    if (entry.better != rc.better) {
      throw RunError("store " + url_ + ": " + benchmark_name + " " + rc.label() + " says " +
                     std::string(to_string(rc.better)) + " is better, but the store has it as " +
                     std::string(to_string(entry.better)) + " is better");
    }
    return entry.id;
  }

  std::string url_;
  Connection connection_;
  sqlite3* db_;
  bool writable_;
  int version_;
  Statement upsert_sut_, upsert_swprofile_, insert_session_, session_exists_, find_benchmark_,
      upsert_benchmark_, upsert_resultclass_, insert_result_, insert_results_, upsert_outcome_, import_session_,
      import_results_, import_outcome_;
  std::vector<std::int64_t> class_ids_;  // of the repeat being stored, reused
  std::unordered_map<std::string, std::int64_t> benchmark_ids_;
  std::unordered_map<std::int64_t, KnownClasses> resultclass_ids_;  // by benchmark id
};

}  // namespace

std::unique_ptr<ResultStore> open_sqlite_store(const std::string& url, const std::string& path,
                                               OpenMode mode) {
  const FileInspection inspection = inspect_store_file(url, path);
  const FileState state = inspection.state;
  if (state != FileState::KbenchStore && mode != OpenMode::CreateIfMissing) {
    throw InputError("store " + url + ": " +
                     (state == FileState::Missing ? path + " does not exist"
                                                  : path + " is an empty file, not a kbench store") +
                     "; expected a store written by `kbench run` (see --store / KBENCH_STORE)");
  }
  if (mode == OpenMode::ReadOnly) {
    auto store = std::make_unique<SqliteStore>(url, open_read_only(url, path), /*writable=*/false,
                                               inspection.schema_version);
    store->initialise(inspection.schema_version);
    return store;
  }
  if (state == FileState::Missing) {
    const fs::path parent = fs::path(path).parent_path();
    std::error_code error;
    if (!parent.empty()) fs::create_directories(parent, error);
    if (error) {
      throw InputError("store " + url + ": cannot create directory " + parent.string() + ": " + error.message());
    }
  }
  auto store = std::make_unique<SqliteStore>(url, open_read_write(url, path, state != FileState::KbenchStore),
                                             /*writable=*/true, inspection.schema_version);
  store->initialise(inspection.schema_version);
  return store;
}

}  // namespace kbench::store
