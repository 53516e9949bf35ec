CREATE TABLE kernel_profile (
  session_id   {int64} NOT NULL REFERENCES session(id),
  benchmark_id {int64} NOT NULL REFERENCES benchmark(id),
  unavailable  TEXT,
  period_ns    {int64} NOT NULL,
  samples      {int64} NOT NULL,
  lost         {int64} NOT NULL,
  unresolved   {int64} NOT NULL,
  unlisted     {int64} NOT NULL,
  PRIMARY KEY (session_id, benchmark_id)
){without_rowid};
CREATE TABLE kernel_profile_function (
  session_id   {int64} NOT NULL,
  benchmark_id {int64} NOT NULL,
  name         {name} NOT NULL,
  samples      {int64} NOT NULL CHECK (samples > 0),
  PRIMARY KEY (session_id, benchmark_id, name),
  FOREIGN KEY (session_id, benchmark_id) REFERENCES kernel_profile(session_id, benchmark_id)
){without_rowid}