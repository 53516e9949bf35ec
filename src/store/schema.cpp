// Schema versions and migrations (docs/resultstore.md, "Versioning").
#include "store/schema.h"

#include "common/errors.h"
#include "store/result_store.h"

namespace kbench::store {

namespace {

// The tables of version 1, unchanged since: a new store gets these and then
// the same migrations an old store gets, so both end up identical.
constexpr const char* kVersion1Sql = R"sql(
CREATE TABLE kbench_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE sut (
  id           INTEGER PRIMARY KEY,
  name         TEXT NOT NULL,
  hostname     TEXT NOT NULL,
  arch         TEXT NOT NULL,
  cpu_model    TEXT NOT NULL,
  cpu_count    INTEGER NOT NULL,
  memory_gib   INTEGER NOT NULL,
  product_name TEXT NOT NULL,
  UNIQUE (name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name)
);
CREATE TABLE swprofile (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
CREATE TABLE session (
  id             INTEGER PRIMARY KEY,
  sut_id         INTEGER NOT NULL REFERENCES sut(id),
  swprofile_id   INTEGER NOT NULL REFERENCES swprofile(id),
  idx            INTEGER NOT NULL CHECK (idx >= 0),
  started_at     TEXT NOT NULL,
  kernel_release TEXT NOT NULL,
  fingerprint    TEXT NOT NULL,
  UNIQUE (sut_id, swprofile_id, idx)
);
CREATE INDEX session_by_swprofile ON session(swprofile_id);
CREATE TABLE benchmark (
  id     INTEGER PRIMARY KEY,
  name   TEXT NOT NULL,
  params TEXT NOT NULL,
  UNIQUE (name, params)
);
CREATE TABLE resultclass (
  id           INTEGER PRIMARY KEY,
  benchmark_id INTEGER NOT NULL REFERENCES benchmark(id),
  name         TEXT NOT NULL,
  unit         TEXT NOT NULL,
  better       TEXT NOT NULL CHECK (better IN ('higher', 'lower')),
  UNIQUE (benchmark_id, name, unit)
);
CREATE TABLE result (
  session_id     INTEGER NOT NULL REFERENCES session(id),
  resultclass_id INTEGER NOT NULL REFERENCES resultclass(id),
  repeat         INTEGER NOT NULL CHECK (repeat >= 0),
  value          REAL NOT NULL,
  recorded_at    INTEGER NOT NULL,
  PRIMARY KEY (session_id, resultclass_id, repeat)
) WITHOUT ROWID;
CREATE TABLE outcome (
  session_id   INTEGER NOT NULL REFERENCES session(id),
  benchmark_id INTEGER NOT NULL REFERENCES benchmark(id),
  status       TEXT NOT NULL CHECK (status IN ('ok', 'skipped', 'failed')),
  reason       TEXT NOT NULL,
  stderr_tail  TEXT NOT NULL,
  recorded_at  INTEGER NOT NULL,
  PRIMARY KEY (session_id, benchmark_id)
) WITHOUT ROWID;
)sql";

}  // namespace

const SchemaDialect& sqlite_dialect() {
  static const SchemaDialect dialect{
      {kVersion1Sql},
      {
          // 1 -> 2: sessions know what they were to run and whether they got
          // to the end. Version-1 sessions predate this: they are taken as
          // finished with an unknown plan, so only a benchmark with samples
          // but no outcome (interrupted) shows up as missing.
          Migration{1,
                    {"ALTER TABLE session ADD COLUMN planned TEXT",
                     "ALTER TABLE session ADD COLUMN finished_at TEXT",
                     "UPDATE session SET finished_at = started_at"}},
          // 2 -> 3: the boots of ssh SUTs into swprofiles' kernels, measured
          // or failed. A deleted session leaves its boot's record behind.
          Migration{2,
                    {R"sql(CREATE TABLE boot (
                      id           INTEGER PRIMARY KEY,
                      sut          TEXT NOT NULL,
                      swprofile    TEXT NOT NULL,
                      plan_key     TEXT NOT NULL,
                      run          TEXT NOT NULL,
                      plan_session INTEGER NOT NULL,
                      number       INTEGER NOT NULL,
                      method       TEXT NOT NULL,
                      started_at   TEXT NOT NULL,
                      seconds      REAL NOT NULL,
                      ok           INTEGER NOT NULL CHECK (ok IN (0, 1)),
                      power_cycled INTEGER NOT NULL CHECK (power_cycled IN (0, 1)),
                      release      TEXT NOT NULL,
                      reason       TEXT NOT NULL,
                      console_tail TEXT NOT NULL,
                      session_id   INTEGER REFERENCES session(id) ON DELETE SET NULL
                    ))sql",
                     "CREATE INDEX boot_by_run ON boot(plan_key, run)"}},
          // 3 -> 4: a session keeps its identity when `kbench merge` copies
          // it to another store (uid), and knows its SUT class without
          // parsing the fingerprint on every compare (sut_class).
          Migration{3,
                    {"ALTER TABLE session ADD COLUMN uid TEXT",
                     "UPDATE session SET uid = lower(hex(randomblob(16)))",
                     "CREATE UNIQUE INDEX session_by_uid ON session(uid)",
                     "ALTER TABLE session ADD COLUMN sut_class TEXT NOT NULL DEFAULT ''",
                     "UPDATE session SET sut_class = COALESCE(CASE WHEN json_valid(fingerprint) THEN "
                     "json_extract(fingerprint, '$.sut_class') END, '') "
                     "WHERE json_type(CASE WHEN json_valid(fingerprint) THEN fingerprint END, '$.sut_class') = 'text'"}},
          // 4 -> 5: texts kept beside the samples (the log of a bisect), so
          // the evidence of a decision stays with the measurements it used.
          Migration{4,
                    {R"sql(CREATE TABLE log (
                      id          INTEGER PRIMARY KEY,
                      kind        TEXT NOT NULL,
                      name        TEXT NOT NULL,
                      created_utc TEXT NOT NULL,
                      text        TEXT NOT NULL
                    ))sql",
                     "CREATE INDEX log_by_kind ON log(kind, id)"}},
      }};
  return dialect;
}

namespace {

constexpr const char* kPostgresVersion1Sql = R"sql(
CREATE TABLE kbench_meta (
  key   TEXT COLLATE "C" PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE sut (
  id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name         TEXT COLLATE "C" NOT NULL,
  hostname     TEXT COLLATE "C" NOT NULL,
  arch         TEXT COLLATE "C" NOT NULL,
  cpu_model    TEXT COLLATE "C" NOT NULL,
  cpu_count    INTEGER NOT NULL,
  memory_gib   BIGINT NOT NULL,
  product_name TEXT COLLATE "C" NOT NULL,
  UNIQUE (name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name)
);
CREATE TABLE swprofile (
  id   BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name TEXT COLLATE "C" NOT NULL UNIQUE
);
CREATE TABLE session (
  id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  sut_id         BIGINT NOT NULL REFERENCES sut(id),
  swprofile_id   BIGINT NOT NULL REFERENCES swprofile(id),
  idx            INTEGER NOT NULL CHECK (idx >= 0),
  started_at     TEXT COLLATE "C" NOT NULL,
  kernel_release TEXT COLLATE "C" NOT NULL,
  fingerprint    TEXT NOT NULL,
  UNIQUE (sut_id, swprofile_id, idx)
);
CREATE INDEX session_by_swprofile ON session(swprofile_id);
CREATE TABLE benchmark (
  id     BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name   TEXT COLLATE "C" NOT NULL,
  params TEXT COLLATE "C" NOT NULL,
  UNIQUE (name, params)
);
CREATE TABLE resultclass (
  id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  benchmark_id BIGINT NOT NULL REFERENCES benchmark(id),
  name         TEXT COLLATE "C" NOT NULL,
  unit         TEXT COLLATE "C" NOT NULL,
  better       TEXT NOT NULL CHECK (better IN ('higher', 'lower')),
  UNIQUE (benchmark_id, name, unit)
);
CREATE TABLE result (
  session_id     BIGINT NOT NULL REFERENCES session(id),
  resultclass_id BIGINT NOT NULL REFERENCES resultclass(id),
  repeat         INTEGER NOT NULL CHECK (repeat >= 0),
  value          DOUBLE PRECISION NOT NULL,
  recorded_at    BIGINT NOT NULL,
  PRIMARY KEY (session_id, resultclass_id, repeat)
);
CREATE TABLE outcome (
  session_id   BIGINT NOT NULL REFERENCES session(id),
  benchmark_id BIGINT NOT NULL REFERENCES benchmark(id),
  status       TEXT NOT NULL CHECK (status IN ('ok', 'skipped', 'failed')),
  reason       TEXT NOT NULL,
  stderr_tail  TEXT NOT NULL,
  recorded_at  BIGINT NOT NULL,
  PRIMARY KEY (session_id, benchmark_id)
);
)sql";

}  // namespace

const SchemaDialect& postgres_dialect() {
  // The same steps as sqlite_dialect(), in PostgreSQL's words.
  static const SchemaDialect dialect{
      {kPostgresVersion1Sql},
      {
          Migration{1,
                    {"ALTER TABLE session ADD COLUMN planned TEXT",
                     "ALTER TABLE session ADD COLUMN finished_at TEXT COLLATE \"C\"",
                     "UPDATE session SET finished_at = started_at"}},
          Migration{2,
                    {R"sql(CREATE TABLE boot (
                      id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                      sut          TEXT COLLATE "C" NOT NULL,
                      swprofile    TEXT COLLATE "C" NOT NULL,
                      plan_key     TEXT COLLATE "C" NOT NULL,
                      run          TEXT COLLATE "C" NOT NULL,
                      plan_session INTEGER NOT NULL,
                      number       INTEGER NOT NULL,
                      method       TEXT NOT NULL,
                      started_at   TEXT NOT NULL,
                      seconds      DOUBLE PRECISION NOT NULL,
                      ok           INTEGER NOT NULL CHECK (ok IN (0, 1)),
                      power_cycled INTEGER NOT NULL CHECK (power_cycled IN (0, 1)),
                      release      TEXT NOT NULL,
                      reason       TEXT NOT NULL,
                      console_tail TEXT NOT NULL,
                      session_id   BIGINT REFERENCES session(id) ON DELETE SET NULL
                    ))sql",
                     "CREATE INDEX boot_by_run ON boot(plan_key, run)"}},
          Migration{3,
                    {"ALTER TABLE session ADD COLUMN uid TEXT COLLATE \"C\"",
                     "ALTER TABLE session ADD COLUMN sut_class TEXT COLLATE \"C\" NOT NULL DEFAULT ''",
                     "UPDATE session SET uid = md5(random()::text || id::text), "
                     "sut_class = COALESCE(fingerprint::jsonb->>'sut_class', '')",
                     "CREATE UNIQUE INDEX session_by_uid ON session(uid)"}},
          Migration{4,
                    {R"sql(CREATE TABLE log (
                      id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                      kind        TEXT COLLATE "C" NOT NULL,
                      name        TEXT COLLATE "C" NOT NULL,
                      created_utc TEXT COLLATE "C" NOT NULL,
                      text        TEXT NOT NULL
                    ))sql",
                     "CREATE INDEX log_by_kind ON log(kind, id)"}},
      }};
  return dialect;
}

std::optional<int> parse_schema_version(const std::string& text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int version = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    version = version * 10 + (c - '0');
  }
  if (version < 1) return std::nullopt;
  return version;
}

int checked_schema_version(const std::string& location, const std::optional<std::string>& stored) {
  const std::string text = stored.value_or("");
  const auto version = parse_schema_version(text);
  if (!version) {
    throw InputError("store " + location + " is not a kbench store (schema_version '" + text +
                     "' in kbench_meta is not a positive integer)");
  }
  if (*version > kSchemaVersion) {
    throw InputError("store " + location + " has schema version " + std::to_string(*version) +
                     ", but this kbench reads schema version " + std::to_string(kSchemaVersion) +
                     " and older; use a newer kbench (the store was not changed)");
  }
  return *version;
}

int create_or_migrate(SchemaConnection& connection, const SchemaDialect& dialect, const std::string& location,
                      const std::string& created_at) {
  const auto stored = connection.meta("schema_version");
  int version = 1;
  int found = 0;
  if (!stored) {
    for (const auto& sql : dialect.create_initial) connection.execute(sql);
    connection.set_meta("created_at", created_at);
  } else {
    found = version = checked_schema_version(location, stored);
  }
  for (const auto& step : dialect.migrations) {
    if (step.from != version) continue;
    for (const auto& sql : step.statements) connection.execute(sql);
    version = step.from + 1;
  }
  if (version != kSchemaVersion) {
    throw RunError("store " + location + ": no migration from schema version " + std::to_string(version) +
                   " to " + std::to_string(kSchemaVersion) + " in this build");
  }
  connection.set_meta("schema_version", std::to_string(version));
  return found;
}

}  // namespace kbench::store
