// The resultstore over an SQL driver (docs/resultstore.md describes URLs,
// schema, versioning and transactions).
#include "store/sql_store.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/errors.h"
#include "common/utc_time.h"
#include "store/store_text.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::store {

namespace fingerprint_key = sysinfo::fingerprint_key;

std::optional<std::string> DriverSchemaConnection::meta(const std::string& key) {
  if (!driver_.has_table("kbench_meta")) return std::nullopt;
  auto query = driver_.prepare("SELECT value FROM kbench_meta WHERE key = ?1");
  query->bind(1, key);
  if (!query->next()) return std::nullopt;
  return query->text(0);
}

void DriverSchemaConnection::set_meta(const std::string& key, const std::string& value) {
  driver_.prepare(R"sql(INSERT INTO kbench_meta(key, value) VALUES (?1, ?2)
                        ON CONFLICT (key) DO UPDATE SET value = excluded.value)sql")
      ->bind(1, key)
      .bind(2, value)
      .run();
}

std::string sql_placeholders(std::size_t count, int first) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    if (i) text += ',';
    text += '?' + std::to_string(first + static_cast<int>(i));
  }
  return text;
}

namespace {

// Transactions a database aborted for a conflict with another writer are
// run again this often before the conflict is the caller's.
constexpr int kTransactionAttempts = 5;

std::string placeholder(int index) { return "?" + std::to_string(index); }

class SqlStore final : public ResultStore {
 public:
  SqlStore(std::string url, std::unique_ptr<SqlDriver> driver, std::unique_ptr<SqlDialect> dialect, bool writable,
           int schema_version)
      : url_(std::move(url)), driver_(std::move(driver)), dialect_(std::move(dialect)), writable_(writable),
        version_(schema_version) {}

  std::int64_t begin_session(const SessionStart& start) override {
    require_writable();
    Sut sut = start.sut;
    if (sut.name.empty()) sut.name = sut.hostname;
    if (sut.name.empty()) throw InputError("new session: the SUT has neither a name nor a hostname");
    if (start.swprofile.empty()) throw InputError("new session: the swprofile name is empty");
    const std::string started_at = start.started_at.empty() ? utc_now_iso8601() : start.started_at;
    const std::string fingerprint = start.fingerprint.is_null() ? std::string("{}") : start.fingerprint.dump();
    const std::string uid = start.uid.empty() ? new_session_uid() : start.uid;
    return in_transaction([&] {
      const std::int64_t sut_id = sut_id_for(sut);
      const std::int64_t swprofile_id = swprofile_id_for(start.swprofile);
      dialect_->lock_session_numbers(*driver_, sut_id, swprofile_id);
      auto insert = sql(R"sql(
        INSERT INTO session(sut_id, swprofile_id, idx, started_at, kernel_release, fingerprint, planned, uid, sut_class)
        VALUES (?1, ?2, (SELECT COALESCE(MAX(idx) + 1, 0) FROM session WHERE sut_id = ?1 AND swprofile_id = ?2),
                ?3, ?4, ?5, ?6, ?7, ?8)
        RETURNING id)sql");
      insert->bind(1, sut_id)
          .bind(2, swprofile_id)
          .bind(3, started_at)
          .bind(4, kernel_release_of(start.fingerprint))
          .bind(5, fingerprint)
          .bind(6, planned_text(start.planned))
          .bind(7, uid)
          .bind(8, sut_class_of(start.fingerprint));
      return returned_id(*insert, "creating the session");
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
    if (dialect_->concurrent_writers()) resolve_classes(benchmark, samples);
    const auto recorded_at = static_cast<std::int64_t>(std::time(nullptr));
    // All samples of the repeat or none: a killed run loses at most the
    // repeat in flight.
    in_transaction([&] {
      resolve_classes(benchmark, samples);
      // Otherwise the foreign key tells a missing session, without a query.
      if (samples.empty()) require_session(session);
      rows_.clear();
      for (std::size_t i = 0; i < samples.size(); ++i) {
        rows_.push_back(ResultInsert{class_ids_[i], repeat, samples[i].value, recorded_at});
      }
      try {
        dialect_->insert_results(*driver_, session, rows_);
      } catch (const SqlError& error) {
        if (error.failure == SqlFailure::Duplicate) {
          throw RunError("store " + url_ + ": " + benchmark.name + " repeat " + std::to_string(repeat) +
                         " of session " + std::to_string(session) + ": " + duplicate_description(samples) +
                         " (twice in one repeat, or the repeat was stored before)");
        }
        if (error.failure == SqlFailure::MissingReference) require_session(session);
        throw;
      }
      return 0;
    });
  }

  void record_outcome(std::int64_t session, const BenchmarkKey& benchmark, const Outcome& outcome) override {
    require_writable();
    if (dialect_->concurrent_writers()) benchmark_id_for(benchmark);
    in_transaction([&] {
      require_session(session);
      auto upsert = sql(R"sql(
        INSERT INTO outcome(session_id, benchmark_id, status, reason, stderr_tail, recorded_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        ON CONFLICT (session_id, benchmark_id) DO UPDATE SET status = excluded.status, reason = excluded.reason,
                                  stderr_tail = excluded.stderr_tail, recorded_at = excluded.recorded_at)sql");
      upsert->bind(1, session)
          .bind(2, benchmark_id_for(benchmark))
          .bind(3, to_string(outcome.status))
          .bind(4, outcome.reason)
          .bind(5, outcome.stderr_tail)
          .bind(6, static_cast<std::int64_t>(std::time(nullptr)))
          .run();
      return 0;
    });
  }

  std::vector<SutListing> list_suts(const std::string& glob) override {
    auto query = sql(R"sql(
      SELECT t.name, t.hostname, t.arch, t.cpu_model, t.cpu_count, t.memory_gib, t.product_name,
             (SELECT COUNT(*) FROM session s WHERE s.sut_id = t.id)
      FROM sut t WHERE )sql" + glob_match("t.name", 1) + " ORDER BY t.name, t.id");
    query->bind(1, glob_parameter(glob));
    std::vector<SutListing> listing;
    while (query->next()) {
      SutListing row;
      row.sut = Sut{query->text(0), query->text(1), query->text(2), query->text(3),
                    static_cast<int>(query->integer(4)), query->integer(5), query->text(6)};
      row.sessions = static_cast<int>(query->integer(7));
      listing.push_back(std::move(row));
    }
    return listing;
  }

  std::vector<SwprofileListing> list_swprofiles(const std::string& glob) override {
    auto query = sql(R"sql(
      SELECT p.id, p.name,
             (SELECT s.kernel_release FROM session s WHERE s.swprofile_id = p.id ORDER BY s.id DESC LIMIT 1),
             (SELECT COUNT(*) FROM session s WHERE s.swprofile_id = p.id),
             (SELECT COUNT(*) FROM session s JOIN result r ON r.session_id = s.id WHERE s.swprofile_id = p.id)
      FROM swprofile p WHERE )sql" + glob_match("p.name", 1) + " ORDER BY p.name");
    auto suts = sql(R"sql(
      SELECT DISTINCT t.name FROM session s JOIN sut t ON t.id = s.sut_id
      WHERE s.swprofile_id = ?1 ORDER BY t.name)sql");
    query->bind(1, glob_parameter(glob));
    std::vector<SwprofileListing> listing;
    while (query->next()) {
      SwprofileListing row;
      row.name = query->text(1);
      row.kernel_release = query->text(2);
      row.sessions = static_cast<int>(query->integer(3));
      row.samples = query->integer(4);
      suts->bind(1, query->integer(0));
      while (suts->next()) row.suts.push_back(suts->text(0));
      listing.push_back(std::move(row));
    }
    return listing;
  }

  std::vector<BenchmarkListing> list_benchmarks(const std::string& glob) override {
    // One benchmark name may have run with several parameter sets: listed
    // once, with the union of its result classes.
    auto classes = sql(R"sql(
      SELECT b.name, rc.name, rc.unit, rc.better
      FROM benchmark b LEFT JOIN resultclass rc ON rc.benchmark_id = b.id
      WHERE )sql" + glob_match("b.name", 1) + " ORDER BY b.name, rc.id");
    auto counts = sql(R"sql(
      SELECT b.name, COUNT(*) FROM benchmark b
      JOIN resultclass rc ON rc.benchmark_id = b.id JOIN result r ON r.resultclass_id = rc.id
      WHERE )sql" + glob_match("b.name", 1) + " GROUP BY b.name");
    classes->bind(1, glob_parameter(glob));
    counts->bind(1, glob_parameter(glob));
    std::vector<BenchmarkListing> listing;
    while (classes->next()) {
      const std::string name = classes->text(0);
      if (listing.empty() || listing.back().name != name) listing.push_back(BenchmarkListing{name, {}, 0});
      if (classes->is_null(1)) continue;
      ResultClass rc{classes->text(1), classes->text(2), better_from_text(classes->text(3))};
      auto& known = listing.back().result_classes;
      const bool seen = std::any_of(known.begin(), known.end(), [&](const ResultClass& other) {
        return other.name == rc.name && other.unit == rc.unit;
      });
      if (!seen) known.push_back(std::move(rc));
    }
    std::unordered_map<std::string, std::int64_t> samples;
    while (counts->next()) samples[counts->text(0)] = counts->integer(1);
    for (auto& row : listing) row.samples = samples[row.name];
    return listing;
  }

  std::vector<OutcomeListing> list_outcomes(const std::vector<std::string>& swprofiles,
                                            OutcomeStatus status) override {
    std::string text = R"sql(
      SELECT t.name, p.name, s.id, b.name, o.status, o.reason, o.stderr_tail, s.idx
      FROM outcome o JOIN session s ON s.id = o.session_id JOIN sut t ON t.id = s.sut_id
      JOIN swprofile p ON p.id = s.swprofile_id JOIN benchmark b ON b.id = o.benchmark_id
      WHERE o.status = ?1)sql";
    if (!swprofiles.empty()) text += " AND p.name IN (" + sql_placeholders(swprofiles.size(), 2) + ")";
    text += " ORDER BY s.id, b.name, b.id";
    auto query = sql(text);
    query->bind(1, to_string(status));
    bind_all(*query, 2, swprofiles);
    std::vector<OutcomeListing> listing;
    while (query->next()) {
      OutcomeListing row;
      row.sut = query->text(0);
      row.swprofile = query->text(1);
      row.session = query->integer(2);
      row.benchmark = query->text(3);
      row.outcome = outcome_from(*query, 4);
      row.session_number = static_cast<int>(query->integer(7)) + 1;
      listing.push_back(std::move(row));
    }
    return listing;
  }

  bool has_swprofile(const std::string& name) override {
    auto query = sql("SELECT 1 FROM swprofile WHERE name = ?1");
    query->bind(1, name);
    return query->next();
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
    std::string session_sql = "SELECT s.id, t.name, p.name, s.idx, " + sut_class_sql() + R"sql(
      FROM session s JOIN sut t ON t.id = s.sut_id JOIN swprofile p ON p.id = s.swprofile_id
      WHERE )sql" + glob_match("t.name", 1) + " AND " + glob_match(sut_class_sql(), 2);
    if (!query.swprofiles.empty()) {
      session_sql += " AND p.name IN (" + sql_placeholders(query.swprofiles.size(), 3) + ")";
    }
    session_sql += " ORDER BY s.id";
    auto session_query = sql(session_sql);
    session_query->bind(1, glob_parameter(query.sut_glob)).bind(2, glob_parameter(query.class_glob));
    bind_all(*session_query, 3, query.swprofiles);
    std::vector<SessionInfo> sessions;
    while (session_query->next()) {
      sessions.push_back({session_query->integer(0), session_query->text(1), session_query->text(2),
                          static_cast<int>(session_query->integer(3)), session_query->text(4)});
    }
    if (sessions.empty()) return;

    auto class_query = sql(R"sql(
      SELECT rc.id, b.name, b.params, rc.name, rc.unit, rc.better, b.id
      FROM resultclass rc JOIN benchmark b ON b.id = rc.benchmark_id
      WHERE )sql" + glob_match("b.name", 1) + " AND " + glob_match("(rc.name || ' (' || rc.unit || ')')", 2));
    class_query->bind(1, glob_parameter(query.benchmark_glob)).bind(2, glob_parameter(query.resultclass_glob));
    std::unordered_map<std::int64_t, ClassInfo> classes;
    while (class_query->next()) {
      classes.emplace(class_query->integer(0),
                      ClassInfo{class_query->integer(6), class_query->text(1), params_from_text(class_query->text(2)),
                                result_class_from(*class_query, 3)});
    }
    if (classes.empty()) return;

    auto results = sql(
        "SELECT resultclass_id, repeat, value FROM result WHERE session_id = ?1 ORDER BY resultclass_id, repeat");
    auto settled = sql("SELECT benchmark_id FROM outcome WHERE session_id = ?1 AND status = 'ok'");
    std::unordered_set<std::int64_t> ok_benchmarks;
    SampleRow row;
    for (const auto& session : sessions) {
      row.sut = session.sut;
      row.swprofile = session.swprofile;
      row.session = session.id;
      row.session_index = session.index;
      row.sut_class = session.sut_class;
      if (query.settled_only) {
        ok_benchmarks.clear();
        settled->bind(1, session.id);
        while (settled->next()) ok_benchmarks.insert(settled->integer(0));
      }
      results->bind(1, session.id);
      std::int64_t current_class = -1;
      const ClassInfo* info = nullptr;
      while (results->next()) {
        const std::int64_t class_id = results->integer(0);
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
        row.repeat = static_cast<int>(results->integer(1));
        row.value = stored_value(
            *results, 2, session.id, [&] { return row.benchmark + " " + row.result_class.label(); }, row.repeat);
        sink(row);
      }
    }
  }

  std::vector<SessionListing> list_sessions(const std::vector<std::string>& swprofiles) override {
    std::string text = session_listing_sql();
    if (!swprofiles.empty()) text += " WHERE p.name IN (" + sql_placeholders(swprofiles.size(), 1) + ")";
    text += " ORDER BY s.id";
    auto query = sql(text);
    bind_all(*query, 1, swprofiles);
    std::vector<SessionListing> listing;
    while (query->next()) listing.push_back(session_from_row(*query, /*with_fingerprint=*/false));
    return listing;
  }

  std::optional<SessionListing> session(std::int64_t session) override {
    auto query = sql(session_listing_sql() + " WHERE s.id = ?1");
    query->bind(1, session);
    if (!query->next()) return std::nullopt;
    return session_from_row(*query, /*with_fingerprint=*/true);
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
    auto outcomes = sql(R"sql(
      SELECT b.id, b.name, b.params, o.status, o.reason, o.stderr_tail
      FROM outcome o JOIN benchmark b ON b.id = o.benchmark_id WHERE o.session_id = ?1 ORDER BY b.name, b.id)sql");
    outcomes->bind(1, session);
    while (outcomes->next()) {
      row_for(outcomes->integer(0), outcomes->text(1), params_from_text(outcomes->text(2))).outcome =
          outcome_from(*outcomes, 3);
    }
    auto stored = sql(R"sql(
      SELECT b.id, b.name, b.params, COUNT(DISTINCT r.repeat), COUNT(*)
      FROM result r JOIN resultclass rc ON rc.id = r.resultclass_id JOIN benchmark b ON b.id = rc.benchmark_id
      WHERE r.session_id = ?1 GROUP BY b.id ORDER BY b.name, b.id)sql");
    stored->bind(1, session);
    while (stored->next()) {
      auto& row = row_for(stored->integer(0), stored->text(1), params_from_text(stored->text(2)));
      row.repeats = static_cast<int>(stored->integer(3));
      row.samples = stored->integer(4);
    }
    return rows;
  }

  void finish_session(std::int64_t session, const nlohmann::json& at_end) override {
    require_writable();
    in_transaction([&] {
      require_session(session, /*lock=*/true);
      sql("UPDATE session SET finished_at = ?2 WHERE id = ?1")->bind(1, session).bind(2, utc_now_iso8601()).run();
      dialect_->set_fingerprint_members(*driver_, session, at_end);
      return 0;
    });
    dialect_->refresh_statistics(*driver_);
  }

  void delete_session(std::int64_t session) override {
    require_writable();
    in_transaction([&] {
      require_session(session, /*lock=*/true);
      for (const char* text : {"DELETE FROM result WHERE session_id = ?1", "DELETE FROM outcome WHERE session_id = ?1",
                               "DELETE FROM kernel_profile_function WHERE session_id = ?1",
                               "DELETE FROM kernel_profile WHERE session_id = ?1", "DELETE FROM session WHERE id = ?1"}) {
        sql(text)->bind(1, session).run();
      }
      return 0;
    });
  }

  std::vector<int> stored_repeats(std::int64_t session, const BenchmarkKey& benchmark) override {
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return {};
    auto query = sql(R"sql(
      SELECT DISTINCT r.repeat FROM result r JOIN resultclass rc ON rc.id = r.resultclass_id
      WHERE r.session_id = ?1 AND rc.benchmark_id = ?2 ORDER BY r.repeat)sql");
    query->bind(1, session).bind(2, *benchmark_id);
    std::vector<int> repeats;
    while (query->next()) repeats.push_back(static_cast<int>(query->integer(0)));
    return repeats;
  }

  std::optional<Outcome> outcome_of(std::int64_t session, const BenchmarkKey& benchmark) override {
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return std::nullopt;
    auto query = sql("SELECT status, reason, stderr_tail FROM outcome WHERE session_id = ?1 AND benchmark_id = ?2");
    query->bind(1, session).bind(2, *benchmark_id);
    if (!query->next()) return std::nullopt;
    return outcome_from(*query, 0);
  }

  std::optional<nlohmann::json> latest_plan(const std::string& plan_key,
                                            const std::vector<std::string>& swprofiles) override {
    std::string text = "SELECT " + dialect_->json_member("s.fingerprint", {fingerprint_key::kPlan}) +
                       " FROM session s JOIN swprofile w ON w.id = s.swprofile_id WHERE " +
                       dialect_->json_member("s.fingerprint", {fingerprint_key::kPlan, fingerprint_key::plan::kKey}) +
                       " = ?1";
    if (!swprofiles.empty()) text += " AND w.name IN (" + sql_placeholders(swprofiles.size(), 2) + ")";
    text += " ORDER BY s.id DESC LIMIT 1";
    auto query = sql(text);
    query->bind(1, plan_key);
    bind_all(*query, 2, swprofiles);
    if (!query->next() || query->is_null(0)) return std::nullopt;
    auto plan = nlohmann::json::parse(query->text(0), nullptr, /*allow_exceptions=*/false);
    if (!plan.is_object()) return std::nullopt;
    return plan;
  }

  std::optional<std::int64_t> find_plan_session(const std::string& swprofile, const std::string& plan_key,
                                                const std::string& run, int plan_session) override {
    namespace plan = fingerprint_key::plan;
    auto member = [&](const char* name) {
      return dialect_->json_member("s.fingerprint", {fingerprint_key::kPlan, name});
    };
    auto query = sql("SELECT s.id FROM session s JOIN swprofile w ON w.id = s.swprofile_id WHERE w.name = ?1 AND " +
                     member(plan::kKey) + " = ?2 AND " + member(plan::kRun) + " = ?3 AND " + member(plan::kSession) +
                     " = ?4 ORDER BY s.id DESC LIMIT 1");
    query->bind(1, swprofile).bind(2, plan_key).bind(3, run).bind(4, plan_session);
    if (!query->next()) return std::nullopt;
    return query->integer(0);
  }

  void discard_benchmark(std::int64_t session, const BenchmarkKey& benchmark) override {
    require_writable();
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return;
    in_transaction([&] {
      sql(R"sql(DELETE FROM result WHERE session_id = ?1
                AND resultclass_id IN (SELECT id FROM resultclass WHERE benchmark_id = ?2))sql")
          ->bind(1, session)
          .bind(2, *benchmark_id)
          .run();
      delete_outcome(session, *benchmark_id);
      delete_kernel_profile(session, *benchmark_id);
      return 0;
    });
  }

  void discard_outcome(std::int64_t session, const BenchmarkKey& benchmark) override {
    require_writable();
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return;
    in_transaction([&] {
      delete_outcome(session, *benchmark_id);
      return 0;
    });
  }

  std::int64_t record_boot(const BootRecord& boot) override {
    require_writable();
    return in_transaction([&] {
      auto insert = sql(R"sql(
        INSERT INTO boot (sut, swprofile, plan_key, run, plan_session, number, method, started_at, seconds, ok,
                          power_cycled, release, reason, console_tail, session_id)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) RETURNING id)sql");
      insert->bind(1, boot.sut).bind(2, boot.swprofile).bind(3, boot.plan_key).bind(4, boot.run)
          .bind(5, boot.plan_session).bind(6, boot.number).bind(7, boot.method).bind(8, boot.started_at)
          .bind(9, boot.seconds).bind(10, boot.ok ? 1 : 0).bind(11, boot.power_cycled ? 1 : 0).bind(12, boot.release)
          .bind(13, boot.reason).bind(14, boot.console_tail);
      if (boot.session && *boot.session != 0) {
        insert->bind(15, *boot.session);
      } else {
        insert->bind(15, std::nullopt);
      }
      return returned_id(*insert, "storing the boot");
    });
  }

  std::vector<BootRecord> list_boots(const std::string& plan_key, const std::string& run) override {
    if (version_ < 3) return {};  // read-only, older than boots: it has none
    auto query = sql(R"sql(
      SELECT id, sut, swprofile, plan_key, run, plan_session, number, method, started_at, seconds, ok, power_cycled,
             release, reason, console_tail, session_id
      FROM boot WHERE (?1 = '' OR plan_key = ?1) AND (?2 = '' OR run = ?2) ORDER BY id)sql");
    query->bind(1, plan_key).bind(2, run);
    std::vector<BootRecord> boots;
    while (query->next()) {
      BootRecord boot;
      boot.id = query->integer(0);
      boot.sut = query->text(1);
      boot.swprofile = query->text(2);
      boot.plan_key = query->text(3);
      boot.run = query->text(4);
      boot.plan_session = static_cast<int>(query->integer(5));
      boot.number = static_cast<int>(query->integer(6));
      boot.method = query->text(7);
      boot.started_at = query->text(8);
      boot.seconds = query->real(9);
      boot.ok = query->integer(10) != 0;
      boot.power_cycled = query->integer(11) != 0;
      boot.release = query->text(12);
      boot.reason = query->text(13);
      boot.console_tail = query->text(14);
      if (!query->is_null(15)) boot.session = query->integer(15);
      boots.push_back(std::move(boot));
    }
    return boots;
  }

  std::int64_t add_log(const std::string& kind, const std::string& name, const std::string& text) override {
    require_writable();
    return in_transaction([&] {
      auto insert = sql("INSERT INTO log (kind, name, created_utc, text) VALUES (?1, ?2, ?3, ?4) RETURNING id");
      insert->bind(1, kind).bind(2, name).bind(3, utc_now_iso8601()).bind(4, text);
      return returned_id(*insert, "storing the log");
    });
  }

  std::vector<StoredLog> logs(const std::string& kind) override {
    if (version_ < 5) return {};  // read-only, older than logs: it has none
    auto query = sql("SELECT id, kind, name, created_utc, text FROM log WHERE (?1 = '' OR kind = ?1) ORDER BY id");
    query->bind(1, kind);
    std::vector<StoredLog> found;
    while (query->next()) {
      found.push_back({query->integer(0), query->text(1), query->text(2), query->text(3), query->text(4)});
    }
    return found;
  }

  void add_kernel_profile(std::int64_t session, const BenchmarkKey& benchmark,
                          const records::KernelProfile& profile) override {
    require_writable();
    if (dialect_->concurrent_writers()) benchmark_id_for(benchmark);
    in_transaction([&] {
      require_session(session);
      const std::int64_t benchmark_id = benchmark_id_for(benchmark);
      delete_kernel_profile(session, benchmark_id);
      insert_kernel_profile(session, benchmark_id, profile);
      return 0;
    });
  }

  std::vector<StoredKernelProfile> kernel_profiles(const std::string& swprofile,
                                                   const std::string& benchmark) override {
    if (version_ < 6) return {};  // read-only, older than profiles: it has none
    auto headers = sql(kernel_profile_select() + R"sql(
      JOIN session s ON s.id = k.session_id JOIN swprofile p ON p.id = s.swprofile_id
      WHERE p.name = ?1 AND b.name = ?2 ORDER BY k.session_id, b.params)sql");
    headers->bind(1, swprofile).bind(2, benchmark);
    return read_kernel_profiles(*headers);
  }

  std::optional<std::int64_t> find_session_by_uid(const std::string& uid) override {
    if (version_ < 4 || uid.empty()) return std::nullopt;
    auto query = sql("SELECT id FROM session WHERE uid = ?1");
    query->bind(1, uid);
    if (!query->next()) return std::nullopt;
    return query->integer(0);
  }

  SessionContent read_session(std::int64_t session) override {
    const char* v2 = version_ >= 2 ? "s.planned, s.finished_at" : "NULL, s.started_at";
    auto head = sql("SELECT " + uid_sql() + R"sql(, t.name, t.hostname, t.arch, t.cpu_model, t.cpu_count,
                     t.memory_gib, t.product_name, p.name, s.idx, s.started_at, s.kernel_release, s.fingerprint, )sql" +
                    v2 + R"sql( FROM session s JOIN sut t ON t.id = s.sut_id
                     JOIN swprofile p ON p.id = s.swprofile_id WHERE s.id = ?1)sql");
    head->bind(1, session);
    if (!head->next()) missing_session(session);
    SessionContent content;
    content.uid = head->text(0);
    content.sut = Sut{head->text(1), head->text(2), head->text(3), head->text(4), static_cast<int>(head->integer(5)),
                      head->integer(6), head->text(7)};
    content.swprofile = head->text(8);
    content.session_index = static_cast<int>(head->integer(9));
    content.started_at = head->text(10);
    content.kernel_release = head->text(11);
    content.fingerprint = nlohmann::json::parse(head->text(12), nullptr, /*allow_exceptions=*/false);
    if (!head->is_null(13)) content.planned = planned_from_text(head->text(13));
    if (!head->is_null(14)) content.finished_at = head->text(14);

    auto outcomes = sql(R"sql(
      SELECT b.name, b.params, o.status, o.reason, o.stderr_tail, o.recorded_at
      FROM outcome o JOIN benchmark b ON b.id = o.benchmark_id WHERE o.session_id = ?1 ORDER BY b.name, b.params)sql");
    outcomes->bind(1, session);
    while (outcomes->next()) {
      content.outcomes.push_back(StoredOutcome{BenchmarkKey{outcomes->text(0), params_from_text(outcomes->text(1))},
                                               outcome_from(*outcomes, 2), outcomes->integer(5)});
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
    auto class_query = sql(R"sql(
      SELECT rc.id, b.name, b.params, rc.name, rc.unit, rc.better FROM resultclass rc
      JOIN benchmark b ON b.id = rc.benchmark_id
      WHERE rc.id IN (SELECT DISTINCT resultclass_id FROM result WHERE session_id = ?1))sql");
    class_query->bind(1, session);
    while (class_query->next()) {
      classes.push_back(ClassRow{BenchmarkKey{class_query->text(1), params_from_text(class_query->text(2))},
                                 result_class_from(*class_query, 3), class_query->integer(0)});
    }
    std::sort(classes.begin(), classes.end(), [](const ClassRow& a, const ClassRow& b) {
      return std::tie(a.benchmark.name, a.benchmark.params, a.result_class.name, a.result_class.unit) <
             std::tie(b.benchmark.name, b.benchmark.params, b.result_class.name, b.result_class.unit);
    });
    std::unordered_map<std::int64_t, std::size_t> rank;
    for (std::size_t i = 0; i < classes.size(); ++i) rank.emplace(classes[i].id, i);
    std::vector<std::vector<StoredResult>> by_class(classes.size());
    auto results = sql(
        "SELECT resultclass_id, repeat, value, recorded_at FROM result WHERE session_id = ?1 "
        "ORDER BY resultclass_id, repeat");
    results->bind(1, session);
    std::int64_t current = -1;
    std::vector<StoredResult>* bucket = nullptr;
    const ClassRow* info = nullptr;
    std::size_t total = 0;
    while (results->next()) {
      const std::int64_t class_id = results->integer(0);
      if (class_id != current) {
        current = class_id;
        const std::size_t index = rank.at(class_id);
        bucket = &by_class[index];
        info = &classes[index];
      }
      const auto repeat = results->integer(1);
      bucket->push_back(StoredResult{
          info->benchmark, info->result_class, static_cast<int>(repeat),
          stored_value(
              *results, 2, session, [&] { return info->benchmark.name + " " + info->result_class.label(); }, repeat),
          results->integer(3)});
      ++total;
    }
    content.results.reserve(total);
    for (auto& bucket_rows : by_class) {
      for (auto& row : bucket_rows) content.results.push_back(std::move(row));
    }
    if (version_ >= 6) {
      auto profiles = sql(kernel_profile_select() + " WHERE k.session_id = ?1 ORDER BY b.name, b.params");
      profiles->bind(1, session);
      content.kernel_profiles = read_kernel_profiles(*profiles);
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
    const std::string uid = content.uid.empty() ? new_session_uid() : content.uid;
    return in_transaction([&] {
      const std::int64_t sut_id = sut_id_for(sut);
      const std::int64_t swprofile_id = swprofile_id_for(content.swprofile);
      dialect_->lock_session_numbers(*driver_, sut_id, swprofile_id);
      // A merged session keeps its number unless this store already has that
      // number for the (SUT, swprofile); then it takes the next free one.
      auto insert = sql(R"sql(
        INSERT INTO session(sut_id, swprofile_id, idx, started_at, kernel_release, fingerprint, planned, uid, sut_class,
                            finished_at)
        VALUES (?1, ?2,
                CASE WHEN EXISTS (SELECT 1 FROM session WHERE sut_id = ?1 AND swprofile_id = ?2 AND idx = ?3) THEN
                  (SELECT MAX(idx) + 1 FROM session WHERE sut_id = ?1 AND swprofile_id = ?2) ELSE ?3 END,
                ?4, ?5, ?6, ?7, ?8, ?9, ?10)
        RETURNING id)sql");
      insert->bind(1, sut_id)
          .bind(2, swprofile_id)
          .bind(3, content.session_index)
          .bind(4, content.started_at)
          .bind(5, content.kernel_release)
          .bind(6, content.fingerprint.is_null() ? std::string("{}") : content.fingerprint.dump())
          .bind(8, uid)
          .bind(9, sut_class_of(content.fingerprint));
      if (content.planned) {
        insert->bind(7, planned_text(*content.planned));
      } else {
        insert->bind(7, std::nullopt);
      }
      if (content.finished_at) {
        insert->bind(10, *content.finished_at);
      } else {
        insert->bind(10, std::nullopt);
      }
      const std::int64_t session = returned_id(*insert, "creating the session " + uid);

      auto outcome = sql(R"sql(
        INSERT INTO outcome(session_id, benchmark_id, status, reason, stderr_tail, recorded_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6))sql");
      for (const auto& stored : content.outcomes) {
        outcome->bind(1, session)
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
      rows_.clear();
      rows_.reserve(content.results.size());
      for (const auto& result : content.results) {
        if (!previous || previous->benchmark.name != result.benchmark.name ||
            previous->benchmark.params != result.benchmark.params ||
            !(previous->result_class == result.result_class)) {
          const std::int64_t benchmark_id = benchmark_id_for(result.benchmark);
          class_id = resultclass_id_for(resultclass_ids_[benchmark_id], 0, benchmark_id, result.benchmark.name,
                                        result.result_class);
          previous = &result;
        }
        rows_.push_back(ResultInsert{class_id, result.repeat, result.value, result.recorded_at});
      }
      dialect_->insert_results(*driver_, session, rows_);
      for (const auto& stored : content.kernel_profiles) {
        insert_kernel_profile(session, benchmark_id_for(stored.benchmark), stored.profile);
      }
      return session;
    });
  }

  std::vector<std::string> integrity_check() override { return dialect_->integrity_problems(*driver_); }

  const std::string& location() const override { return url_; }

 private:
  std::unique_ptr<SqlStatement> sql(const std::string& text) { return driver_->prepare(text); }

  std::string glob_match(const std::string& expression, int index) const {
    return dialect_->glob_match(expression, placeholder(index));
  }
  std::string glob_parameter(const std::string& glob) const { return dialect_->glob_parameter(glob_or_all(glob)); }

  static void bind_all(SqlStatement& statement, int first, const std::vector<std::string>& values) {
    for (std::size_t i = 0; i < values.size(); ++i) statement.bind(first + static_cast<int>(i), values[i]);
  }

  static Outcome outcome_from(const SqlStatement& row, int first) {
    return Outcome{parse_outcome_status(row.text(first)).value_or(OutcomeStatus::Failed), row.text(first + 1),
                   row.text(first + 2)};
  }

  static ResultClass result_class_from(const SqlStatement& row, int first) {
    return ResultClass{row.text(first), row.text(first + 1), better_from_text(row.text(first + 2))};
  }

  // The id an INSERT ... RETURNING id gave back.
  std::int64_t returned_id(SqlStatement& insert, const std::string& what) {
    if (!insert.next()) throw RunError("store " + url_ + ": " + what + ": the database returned no id");
    const std::int64_t id = insert.integer(0);
    insert.run();
    return id;
  }

  // A value column keeps what the database cannot read as a number as it
  // came (SQLite: the text 'NaN', a blob, NULL), which would read as 0.0: a
  // measurement nobody made. kbench never writes one (non-finite values are
  // refused on the way in), so the store was edited: refuse to read on.
  template <typename Where>
  double stored_value(const SqlStatement& results, int column, std::int64_t session, const Where& result_class,
                      std::int64_t repeat) const {
    const auto not_a_number = results.non_number(column);
    if (!not_a_number) return results.real(column);
    throw InputError(url_ + ": session id " + std::to_string(session) + ", " + result_class() + " repeat " +
                     std::to_string(repeat) + ": the stored value is " + *not_a_number +
                     ", not a number; expected a finite number (the store was edited outside kbench)");
  }

  void require_writable() const {
    if (!writable_) throw RunError("store " + url_ + ": opened read-only; this command does not write");
  }

  [[noreturn]] void missing_session(std::int64_t session) const {
    throw RunError("store " + url_ + ": session " + std::to_string(session) + " does not exist");
  }

  // `lock`: the session row stays locked against other writers until the
  // transaction ends.
  void require_session(std::int64_t session, bool lock = false) {
    auto query = sql(std::string("SELECT 1 FROM session WHERE id = ?1") + (lock ? dialect_->lock_clause() : ""));
    query->bind(1, session);
    if (!query->next()) missing_session(session);
  }

  void delete_outcome(std::int64_t session, std::int64_t benchmark_id) {
    sql("DELETE FROM outcome WHERE session_id = ?1 AND benchmark_id = ?2")->bind(1, session).bind(2, benchmark_id).run();
  }

  void delete_kernel_profile(std::int64_t session, std::int64_t benchmark_id) {
    for (const char* text : {"DELETE FROM kernel_profile_function WHERE session_id = ?1 AND benchmark_id = ?2",
                             "DELETE FROM kernel_profile WHERE session_id = ?1 AND benchmark_id = ?2"}) {
      sql(text)->bind(1, session).bind(2, benchmark_id).run();
    }
  }

  void insert_kernel_profile(std::int64_t session, std::int64_t benchmark_id, const records::KernelProfile& profile) {
    auto header = sql(R"sql(
      INSERT INTO kernel_profile(session_id, benchmark_id, unavailable, period_ns, samples, lost, unresolved, unlisted)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8))sql");
    header->bind(1, session).bind(2, benchmark_id);
    if (profile.unavailable) {
      header->bind(3, *profile.unavailable);
    } else {
      header->bind(3, std::nullopt);
    }
    header->bind(4, stored_count(profile.period_ns))
        .bind(5, stored_count(profile.samples))
        .bind(6, stored_count(profile.lost))
        .bind(7, stored_count(profile.unresolved))
        .bind(8, stored_count(profile.unlisted))
        .run();
    auto function = sql(R"sql(
      INSERT INTO kernel_profile_function(session_id, benchmark_id, name, samples) VALUES (?1, ?2, ?3, ?4))sql");
    for (const auto& [name, samples] : profile.functions) {
      function->bind(1, session).bind(2, benchmark_id).bind(3, name).bind(4, stored_count(samples)).run();
    }
  }

  // The columns read_kernel_profiles() reads, of kernel_profile k joined to
  // its benchmark b; the caller adds the rest of the query.
  static std::string kernel_profile_select() {
    return R"sql(
      SELECT k.session_id, k.benchmark_id, b.name, b.params, k.unavailable, k.period_ns, k.samples, k.lost,
             k.unresolved, k.unlisted
      FROM kernel_profile k JOIN benchmark b ON b.id = k.benchmark_id)sql";
  }

  std::vector<StoredKernelProfile> read_kernel_profiles(SqlStatement& headers) {
    auto functions = sql(R"sql(
      SELECT name, samples FROM kernel_profile_function WHERE session_id = ?1 AND benchmark_id = ?2)sql");
    std::vector<StoredKernelProfile> found;
    while (headers.next()) {
      StoredKernelProfile row;
      row.session = headers.integer(0);
      row.benchmark = BenchmarkKey{headers.text(2), params_from_text(headers.text(3))};
      auto& profile = row.profile;
      profile.benchmark = row.benchmark.name;
      if (!headers.is_null(4)) profile.unavailable = headers.text(4);
      profile.period_ns = static_cast<std::uint64_t>(headers.integer(5));
      profile.samples = static_cast<std::uint64_t>(headers.integer(6));
      profile.lost = static_cast<std::uint64_t>(headers.integer(7));
      profile.unresolved = static_cast<std::uint64_t>(headers.integer(8));
      profile.unlisted = static_cast<std::uint64_t>(headers.integer(9));
      functions->bind(1, row.session).bind(2, headers.integer(1));
      while (functions->next()) {
        profile.functions[functions->text(0)] = static_cast<std::uint64_t>(functions->integer(1));
      }
      found.push_back(std::move(row));
    }
    return found;
  }

  // Sample counts are 64-bit signed in both databases; no real count comes
  // near the limit.
  static std::int64_t stored_count(std::uint64_t count) {
    return static_cast<std::int64_t>(std::min<std::uint64_t>(count, std::numeric_limits<std::int64_t>::max()));
  }

  // Columns 0-11 of a SessionListing; version-1 stores (read-only, not yet
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
  std::string sut_class_sql() const { return version_ >= 4 ? "s.sut_class" : dialect_->fingerprint_sut_class(); }

  SessionListing session_from_row(const SqlStatement& row, bool with_fingerprint) {
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
    auto outcomes = sql("SELECT benchmark_id FROM outcome WHERE session_id = ?1");
    outcomes->bind(1, session);
    while (outcomes->next()) settled.insert(outcomes->integer(0));
    for (const auto& [id, key] : planned_with_ids(session)) {
      if (!settled.count(id)) gap_for(id, key.name, key.params);
    }
    // CROSS JOIN fixes SQLite's loop order: the few benchmarks without an
    // outcome outside, then their result classes, then the session's results
    // of each class by primary key; never a scan of all the session's
    // results. (PostgreSQL's planner reorders it as it sees fit.)
    auto begun = sql(R"sql(
      SELECT b.id, b.name, b.params, COUNT(DISTINCT r.repeat)
      FROM benchmark b CROSS JOIN resultclass rc CROSS JOIN result r
      WHERE rc.benchmark_id = b.id AND r.session_id = ?1 AND r.resultclass_id = rc.id
        AND NOT EXISTS (SELECT 1 FROM outcome o WHERE o.session_id = ?1 AND o.benchmark_id = b.id)
      GROUP BY b.id ORDER BY b.name, b.id)sql");
    begun->bind(1, session);
    while (begun->next()) {
      gap_for(begun->integer(0), begun->text(1), params_from_text(begun->text(2))).repeats_stored =
          static_cast<int>(begun->integer(3));
    }
    return gaps;
  }

  // The session's planned benchmarks in plan order, each with its benchmark
  // row's id; a planned benchmark that never started may have no row yet and
  // gets a negative id of its own.
  std::vector<std::pair<std::int64_t, BenchmarkKey>> planned_with_ids(std::int64_t session) {
    std::vector<std::pair<std::int64_t, BenchmarkKey>> planned_keys;
    if (version_ < 2) return planned_keys;
    auto planned = sql("SELECT planned FROM session WHERE id = ?1");
    planned->bind(1, session);
    if (!planned->next() || planned->is_null(0)) return planned_keys;
    std::int64_t unknown_id = -1;
    for (auto& key : planned_from_text(planned->text(0))) {
      const auto id = find_benchmark_id(key);
      planned_keys.emplace_back(id ? *id : unknown_id--, std::move(key));
    }
    return planned_keys;
  }

  // `body` in one transaction, run again when the database aborted it for a
  // conflict with another writer. A rollback forgets cached ids: they may
  // name rows it removed.
  template <class Body>
  std::invoke_result_t<Body&> in_transaction(Body&& body) {
    for (int attempt = 1;; ++attempt) {
      try {
        SqlTransaction transaction(*driver_);
        auto result = body();
        transaction.commit();
        return result;
      } catch (const SqlError& error) {
        forget_cached_ids();
        if (error.failure != SqlFailure::Conflict || attempt == kTransactionAttempts) throw;
      } catch (...) {
        forget_cached_ids();
        throw;
      }
    }
  }

  void forget_cached_ids() {
    benchmark_ids_.clear();
    resultclass_ids_.clear();
  }

  // ON CONFLICT ... DO UPDATE returns the row that was there already (or
  // that another writer created meanwhile) too.
  std::int64_t sut_id_for(const Sut& sut) {
    auto upsert = sql(R"sql(
      INSERT INTO sut(name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
      ON CONFLICT (name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name)
      DO UPDATE SET name = excluded.name RETURNING id)sql");
    upsert->bind(1, sut.name)
        .bind(2, sut.hostname)
        .bind(3, sut.arch)
        .bind(4, sut.cpu_model)
        .bind(5, sut.cpu_count)
        .bind(6, sut.memory_gib)
        .bind(7, sut.product_name);
    return returned_id(*upsert, "storing the SUT");
  }

  std::int64_t swprofile_id_for(const std::string& name) {
    auto upsert = sql(R"sql(
      INSERT INTO swprofile(name) VALUES (?1)
      ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id)sql");
    upsert->bind(1, name);
    return returned_id(*upsert, "storing the swprofile");
  }

  std::optional<std::int64_t> find_benchmark_id(const BenchmarkKey& benchmark) {
    auto query = sql("SELECT id FROM benchmark WHERE name = ?1 AND params = ?2");
    query->bind(1, benchmark.name).bind(2, canonical_params(benchmark.params));
    if (!query->next()) return std::nullopt;
    return query->integer(0);
  }

  std::int64_t benchmark_id_for(const BenchmarkKey& benchmark) {
    std::string key = benchmark.name;
    key += '\0';
    key += canonical_params(benchmark.params);
    if (auto it = benchmark_ids_.find(key); it != benchmark_ids_.end()) return it->second;
    auto upsert = sql(R"sql(
      INSERT INTO benchmark(name, params) VALUES (?1, ?2)
      ON CONFLICT (name, params) DO UPDATE SET name = excluded.name RETURNING id)sql");
    upsert->bind(1, benchmark.name).bind(2, canonical_params(benchmark.params));
    const std::int64_t id = returned_id(*upsert, "storing benchmark " + benchmark.name);
    benchmark_ids_.emplace(std::move(key), id);
    return id;
  }

  // The ids of the repeat's result classes into class_ids_, in sample order.
  void resolve_classes(const BenchmarkKey& benchmark, const std::vector<records::Sample>& samples) {
    const std::int64_t benchmark_id = benchmark_id_for(benchmark);
    auto& known = resultclass_ids_[benchmark_id];
    class_ids_.clear();
    for (std::size_t position = 0; position < samples.size(); ++position) {
      class_ids_.push_back(
          resultclass_id_for(known, position, benchmark_id, benchmark.name, samples[position].result_class));
    }
  }

  // Which sample broke the primary key: only on the error path.
  std::string duplicate_description(const std::vector<records::Sample>& samples) const {
    std::unordered_map<std::int64_t, std::size_t> seen;
    for (std::size_t i = 0; i < class_ids_.size(); ++i) {
      if (!seen.emplace(class_ids_[i], i).second) return samples[i].result_class.label() + " is already stored";
    }
    return "the repeat is already stored";
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
        known.entries.push_back(stored_resultclass(benchmark_id, rc));
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

  // The result class's row, created when new. DO NOTHING locks no row that
  // is there already, and the SELECT then sees it whoever created it; the
  // stored direction is returned so a disagreement can be told.
  KnownClasses::Entry stored_resultclass(std::int64_t benchmark_id, const ResultClass& rc) {
    sql(R"sql(INSERT INTO resultclass(benchmark_id, name, unit, better) VALUES (?1, ?2, ?3, ?4)
              ON CONFLICT (benchmark_id, name, unit) DO NOTHING)sql")
        ->bind(1, benchmark_id)
        .bind(2, rc.name)
        .bind(3, rc.unit)
        .bind(4, to_string(rc.better))
        .run();
    auto query = sql("SELECT id, better FROM resultclass WHERE benchmark_id = ?1 AND name = ?2 AND unit = ?3");
    query->bind(1, benchmark_id).bind(2, rc.name).bind(3, rc.unit);
    if (!query->next()) throw RunError("store " + url_ + ": result class " + rc.label() + " was not stored");
    return {rc.name, rc.unit, query->integer(0), better_from_text(query->text(1))};
  }

  std::string url_;
  std::unique_ptr<SqlDriver> driver_;
  std::unique_ptr<SqlDialect> dialect_;
  bool writable_;
  int version_;
  std::vector<std::int64_t> class_ids_;  // of the repeat being stored, reused
  std::vector<ResultInsert> rows_;       // of the repeat or session being stored, reused
  std::unordered_map<std::string, std::int64_t> benchmark_ids_;
  std::unordered_map<std::int64_t, KnownClasses> resultclass_ids_;  // by benchmark id
};

}  // namespace

std::unique_ptr<ResultStore> make_sql_store(std::string url, std::unique_ptr<SqlDriver> driver,
                                            std::unique_ptr<SqlDialect> dialect, bool writable, int schema_version) {
  return std::make_unique<SqlStore>(std::move(url), std::move(driver), std::move(dialect), writable, schema_version);
}

}  // namespace kbench::store
