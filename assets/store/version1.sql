CREATE TABLE kbench_meta (
  key   {name} PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE sut (
  id           {id},
  name         {name} NOT NULL,
  hostname     {name} NOT NULL,
  arch         {name} NOT NULL,
  cpu_model    {name} NOT NULL,
  cpu_count    INTEGER NOT NULL,
  memory_gib   {int64} NOT NULL,
  product_name {name} NOT NULL,
  UNIQUE (name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name)
);
CREATE TABLE swprofile (
  id   {id},
  name {name} NOT NULL UNIQUE
);
CREATE TABLE session (
  id             {id},
  sut_id         {int64} NOT NULL REFERENCES sut(id),
  swprofile_id   {int64} NOT NULL REFERENCES swprofile(id),
  idx            INTEGER NOT NULL CHECK (idx >= 0),
  started_at     {name} NOT NULL,
  kernel_release {name} NOT NULL,
  fingerprint    TEXT NOT NULL,
  UNIQUE (sut_id, swprofile_id, idx)
);
CREATE INDEX session_by_swprofile ON session(swprofile_id);
CREATE TABLE benchmark (
  id     {id},
  name   {name} NOT NULL,
  params {name} NOT NULL,
  UNIQUE (name, params)
);
CREATE TABLE resultclass (
  id           {id},
  benchmark_id {int64} NOT NULL REFERENCES benchmark(id),
  name         {name} NOT NULL,
  unit         {name} NOT NULL,
  better       TEXT NOT NULL CHECK (better IN ('higher', 'lower')),
  UNIQUE (benchmark_id, name, unit)
);
CREATE TABLE result (
  session_id     {int64} NOT NULL REFERENCES session(id),
  resultclass_id {int64} NOT NULL REFERENCES resultclass(id),
  repeat         INTEGER NOT NULL CHECK (repeat >= 0),
  value          {real} NOT NULL,
  recorded_at    {int64} NOT NULL,
  PRIMARY KEY (session_id, resultclass_id, repeat)
){without_rowid};
CREATE TABLE outcome (
  session_id   {int64} NOT NULL REFERENCES session(id),
  benchmark_id {int64} NOT NULL REFERENCES benchmark(id),
  status       TEXT NOT NULL CHECK (status IN ('ok', 'skipped', 'failed')),
  reason       TEXT NOT NULL,
  stderr_tail  TEXT NOT NULL,
  recorded_at  {int64} NOT NULL,
  PRIMARY KEY (session_id, benchmark_id)
){without_rowid};
