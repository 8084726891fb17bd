-- prelude.sql — shared inputs of every kvio analysis (run it first).
--
-- Runs on a kvio trace.db with kvio's extension loaded (sqlite3 -cmd '.load
-- build/kvio'): it reads the typed tables (kvio_cmd, kvio_obj) and the files
-- use the extension's operators (kvio_pct, kvio_depth, kvio_groups and their
-- gathering aggregates; docs/database.md). Creates TEMP tables and views only;
-- safe to run again.
--
-- Labels: process names are "LMCache <label>", "NVMe <dev> <label>",
-- "Serving <label>". Commands are grouped by the integer id of their NVMe
-- process (lid = kvio_cmd.upid, one per label) and named at the end through
-- kvio_proc.
-- The pool: a label's commands with trace_id != 0, or all of its commands
-- when none is tagged (transports without a user_data channel).
-- The window (kvio-report --time-range / --trace-id): :win_lo/:win_hi (ns) keep
-- the command and object slices overlapping [lo, hi] (edges inclusive),
-- :win_tlo/:win_thi those of trace_ids lo..hi (an untagged command never);
-- unbound (NULL) bounds keep everything (kvio_window holds them for the views).
-- Percentile, everywhere: pct(xs, q) = sorted(xs)[min(n - 1, floor(q * n))],
-- NULLs first; kvio_pct is the one place that computes it.

DROP TABLE IF EXISTS temp.kvio_proc;
DROP TABLE IF EXISTS temp.kvio_cmd_proc;
DROP TABLE IF EXISTS temp.kvio_pool_all;
DROP TABLE IF EXISTS temp.kvio_object;
DROP TABLE IF EXISTS temp.kvio_window;
DROP TABLE IF EXISTS temp.kvio_rule;
DROP TABLE IF EXISTS temp.kvio_qd1_gap;
DROP VIEW IF EXISTS temp.kvio_qd1_gap_fill;
DROP TABLE IF EXISTS temp.kvio_filled;
DROP TABLE IF EXISTS temp.kvio_latency;
DROP VIEW IF EXISTS temp.kvio_latency_fill;
DROP TABLE IF EXISTS temp.kvio_batch;
DROP TABLE IF EXISTS temp.kvio_qd;
DROP VIEW IF EXISTS temp.kvio_qd_fill;
DROP VIEW IF EXISTS temp.kvio_batch_fill;
DROP VIEW IF EXISTS temp.kvio_pool_gather;
DROP VIEW IF EXISTS temp.kvio_qd1_svc;
DROP VIEW IF EXISTS temp.kvio_qd1_verdict;
DROP VIEW IF EXISTS temp.kvio_object_span;
DROP VIEW IF EXISTS temp.kvio_tp_gap;
DROP VIEW IF EXISTS temp.kvio_command;
DROP VIEW IF EXISTS temp.kvio_pool;
DROP VIEW IF EXISTS temp.kvio_command_batches;
DROP VIEW IF EXISTS temp.kvio_pool_batches;
DROP VIEW IF EXISTS temp.kvio_command_ordered_batches;
DROP VIEW IF EXISTS temp.kvio_pool_ordered_batches;
DROP TABLE IF EXISTS temp.kvio_sample;
DROP VIEW IF EXISTS temp.kvio_grp;
DROP VIEW IF EXISTS temp.kvio_cdf;
DROP VIEW IF EXISTS temp.kvio_cdf_grid;
DROP TABLE IF EXISTS temp.kvio_cdf_q;

-- kvio_proc: every capture process and its label
CREATE TEMP TABLE kvio_proc(upid INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO kvio_proc
SELECT
  upid,
  name,                                             -- process name
  CASE
    WHEN name LIKE 'LMCache %' THEN substr(name, 9)
    WHEN name LIKE 'Serving %' THEN substr(name, 9)
    WHEN name LIKE 'NVMe %' THEN substr(name, instr(substr(name, 6), ' ') + 6)
    ELSE name
  END AS label                                      -- capture label (A/B arm)
FROM process
WHERE name IS NOT NULL;

-- kvio_window: the window's bounds, NULL when unbound (a view cannot hold parameters)
CREATE TEMP TABLE kvio_window AS SELECT :win_lo AS lo, :win_hi AS hi, :win_tlo AS tlo, :win_thi AS thi;

-- kvio_rule: the thresholds of the report's verdicts, which the findings
-- (findings.sql: the exported trace's "kvio findings" tracks) select by too
CREATE TEMP TABLE kvio_rule AS SELECT
  coalesce(:batch_gap_ns, 50000) AS batch_gap_ns,  -- inferred batches split where a submit gap exceeds it (ns;
                                                   -- kvio-report --batch-gap-us, default 50 us)
  4 AS qd1_min_cmds,                               -- QD1 detector: objects with at least this many tagged commands
  0.5 AS qd1_ratio,                                -- serialized: gap p50 >= qd1_ratio x the service time
  40000 AS qd1_suspicious_ns,                      -- without completions: suspicious at gap p50 >= this (ns)
  1 AS qd_low;                                     -- a low achieved queue depth: <= this (qd.sql's pct_time_le1)

-- kvio_command: one row per NVMe command (in the window), its args typed (no extract_arg)
CREATE TEMP VIEW kvio_command AS
SELECT
  upid AS lid,                                      -- label id: the NVMe process
  id,
  ts,                                               -- submit time (ns)
  dur,                                              -- real or nominal duration (ns)
  ts_end,                                           -- ts + dur
  name AS op,                                       -- op_name: read, write, ...
  name_id AS op_id,                                 -- op's id in kvio_cmd_name (group by it, name it
                                                    -- at the end: an integer key is cheaper than text)
  trace_id AS tid,                                  -- user_data >> 32; NULL when 0 (filter tagged
                                                    -- commands with tid > 0: the scan applies it)
  tagged,                                           -- trace_id IS NOT NULL (1 or 0)
  slba,                                             -- start LBA
  data_len AS dlen,                                 -- bytes
  role,                                             -- header | payload (store objects)
  real_dur AS real,                                 -- 1: dur from a completion (filter with real = 1:
                                                    -- the scan applies it, a bare "WHERE real" SQLite does)
  (SELECT label FROM kvio_proc p WHERE p.upid = kvio_cmd.upid) AS label, -- its name (computed only when read)
  win_pool,                                         -- NULL; kvio_pool's filter (below)
  batch                                             -- 0: rows; kvio_command_batches' 1 (below)
FROM kvio_cmd                                       -- the scan skips what is outside the window:
WHERE win_lo IS (SELECT lo FROM kvio_window)        -- ts + dur >= lo
  AND win_hi IS (SELECT hi FROM kvio_window)        -- ts <= hi
  AND win_tlo IS (SELECT tlo FROM kvio_window)      -- tlo <= trace_id <= thi
  AND win_thi IS (SELECT thi FROM kvio_window);

-- kvio_cmd_proc: the NVMe processes (label ids) that have commands, found
-- from their command tracks (each scan stops at the process's first command)
CREATE TEMP TABLE kvio_cmd_proc(lid INTEGER PRIMARY KEY);
INSERT INTO kvio_cmd_proc
SELECT u.upid
FROM (SELECT DISTINCT upid FROM process_track        -- each process once (a scan per track cost
      WHERE name LIKE 'writes%' OR name LIKE 'reads%' -- a chunk's selection per track: 80M
         OR name LIKE 'other%' OR name LIKE 'untagged%') u -- instructions at 1M lines, 212 tracks)
WHERE EXISTS (SELECT 1 FROM kvio_command c WHERE c.lid = u.upid);

-- kvio_pool_all: labels with commands of which none is tagged
CREATE TEMP TABLE kvio_pool_all(lid INTEGER PRIMARY KEY);
INSERT INTO kvio_pool_all
SELECT lid FROM kvio_cmd_proc p
WHERE NOT EXISTS (SELECT 1 FROM kvio_command c WHERE c.lid = p.lid AND c.tagged);

-- kvio_pool: the commands the per-command analyses run over: the tagged ones,
-- and every command of the labels in kvio_pool_all (win_pool IS 'lid,lid,...':
-- the scan keeps exactly those, as "tagged OR lid IN kvio_pool_all" would)
CREATE TEMP VIEW kvio_pool AS
SELECT * FROM kvio_command
WHERE win_pool IS (SELECT coalesce(group_concat(lid), '') FROM kvio_pool_all);

-- kvio_command_batches, kvio_pool_batches: the rows of kvio_command and kvio_pool
-- handed to a gathering aggregate of the extension (kvio_*_gather,
-- kvio_count_distinct) a chunk at a time (kvio_cmd's batch = 1: SQLite steps
-- the aggregate once per chunk, not once per command; the same values). A row
-- of these views is a batch of commands: read its columns only as arguments of
-- such aggregates, in a query over this view alone, filtered by WHERE terms the
-- scan applies itself (tid > 0, real = 1, op IN (...), role = '...', lid = x;
-- docs/database.md, Batches: a column read elsewhere is an error, with the
-- exceptions listed there). Another
-- WHERE term that SQLite shows the scan, or an ORDER BY, makes it hand out
-- single commands, which the aggregates take as well. In id order; the
-- *_ordered_batches views (batch = 2) come in (lid, ts, id) order, for the
-- operators that need rows in order (kvio-ingest's databases are in that order
-- already; others are sorted in memory, 32 bytes a command).
CREATE TEMP VIEW kvio_command_batches AS SELECT * FROM kvio_command WHERE batch = 1;
CREATE TEMP VIEW kvio_pool_batches AS SELECT * FROM kvio_pool WHERE batch = 1;
CREATE TEMP VIEW kvio_command_ordered_batches AS SELECT * FROM kvio_command WHERE batch = 2;
CREATE TEMP VIEW kvio_pool_ordered_batches AS SELECT * FROM kvio_pool WHERE batch = 2;

-- kvio_object: one row per KV object span (slices on objects* tracks), its
-- args from kvio_obj (typed), or extract_arg for a database whose objects
-- keep their args in kvio_arg (kvio-ingest --pftrace)
CREATE TEMP TABLE kvio_object AS
SELECT *, NOT (error IS NULL OR error = '' OR error = 0) AS failed -- 1: a failed op (error set: not NULL, '' or 0), else 0
FROM (SELECT
  p.label,
  s.id,
  s.ts,                                             -- object begin (ns)
  s.dur,                                            -- span (ns)
  s.name,
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.trace_id') ELSE o.trace_id END AS tid,
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.op') ELSE o.op END AS op, -- store | load | delete
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.bytes') ELSE o.bytes END AS bytes,
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.n_cmds') ELSE o.n_cmds END AS n_cmds,
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.fmt') ELSE o.fmt END AS fmt, -- key field 2 (shard identity on MP captures)
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.chunk') ELSE o.chunk END AS chunk, -- key field 4, 12 chars
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.key') ELSE o.key END AS key, -- last 24 chars of the key
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.error') ELSE o.error END AS error, -- set on failed ops
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.tp_rank') ELSE o.tp_rank END AS tp_rank, -- decoded shard rank
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.tp_world') ELSE o.tp_world END AS tp_world, -- decoded world size
  CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.tp_chunk') ELSE o.tp_chunk END AS tp_chunk -- decoded chunk id
FROM kvio_slice s
JOIN process_track pt ON s.track_id = pt.id
JOIN kvio_proc p USING (upid)
LEFT JOIN kvio_obj o ON o.id = s.arg_set_id
WHERE pt.name LIKE 'objects%'
  AND (:win_hi IS NULL OR s.ts <= :win_hi) AND (:win_lo IS NULL OR s.ts + s.dur >= :win_lo)
  AND (:win_tlo IS NULL OR (CASE WHEN o.id IS NULL THEN extract_arg(s.arg_set_id, 'debug.trace_id') ELSE o.trace_id END)
                           BETWEEN :win_tlo AND :win_thi));

-- kvio_object_span: object spans per label and op (store, load, delete) over the
-- objects without an error: objects.sql's span_p50/p99, and the findings' slow objects
CREATE TEMP VIEW kvio_object_span AS
SELECT
  k1 AS label,
  k2 AS op,                                         -- store | load | delete
  n,                                                -- objects
  p50,                                              -- span p50 (ns)
  p99                                               -- span p99 (ns)
FROM kvio_pct((SELECT kvio_pct_gather(label, op, dur) FROM kvio_object
               WHERE NOT failed AND op IN ('store', 'load', 'delete')));

-- Shared gathers: a pass over the commands that several files read is kept in a
-- TEMP table, filled by the first file on this connection that needs it:
--   INSERT INTO kvio_x SELECT * FROM kvio_x_fill; INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_x');
-- (kvio_x_fill's gather runs only while kvio_filled does not name kvio_x: after
-- that its scan is skipped: the commands are the inner side of a CROSS JOIN with
-- a row that exists only while kvio_x is not filled, so SQLite never opens their
-- scan; the same test as a WHERE term would be checked on every batch of a
-- scan). kvio-report runs the files that share them on one connection
-- (report/run.c).
CREATE TEMP TABLE kvio_filled(name TEXT PRIMARY KEY);

-- kvio_latency: per (label id, op read | write) the real durations of the pool's
-- commands (latency.sql's latency; the QD1 service time is their p25)
CREATE TEMP TABLE kvio_latency(
  lid INTEGER, op_id INTEGER,                       -- label id, the op's id in kvio_cmd_name
  n INTEGER, p25, p50, p95, p99, max,               -- commands with a real duration; latency (ns)
  PRIMARY KEY (lid, op_id));
CREATE TEMP VIEW kvio_latency_fill AS
SELECT k1, k2, n, p25, p50, p95, p99, max
FROM (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM kvio_filled WHERE name = 'kvio_latency'))
     CROSS JOIN kvio_pct(kvio_pick((SELECT 'kvio_latency' FROM kvio_filled WHERE name = 'kvio_pool'), (
  SELECT kvio_pct_gather(lid, op_id, dur)
  FROM (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM kvio_filled WHERE name = 'kvio_pool'))
       CROSS JOIN kvio_pool_batches
  WHERE real = 1 AND op IN ('read', 'write'))))
WHERE k2 IN (SELECT id FROM kvio_cmd_name WHERE name IN ('read', 'write')); -- (kvio_pool_gather's has every op)

-- kvio_batch: the inferred batches: each label's pool commands in submit order,
-- split where a submit gap exceeds kvio_rule's batch_gap_ns; numbered (pos) in
-- order, each label's in start order (batches.sql's sizes; findings.sql's batches)
CREATE TEMP TABLE kvio_batch(
  pos INTEGER PRIMARY KEY,
  lid INTEGER,                                      -- label id
  start INTEGER,                                    -- its first submit (ns)
  end INTEGER,                                      -- the latest end of its commands (ns)
  n INTEGER,                                        -- its commands
  tid);                                             -- its first command's trace_id (no type, as kvio_object's)
CREATE TEMP VIEW kvio_batch_fill AS
SELECT NULL, k, start, end, n, tag
FROM (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM kvio_filled WHERE name = 'kvio_batch'))
     CROSS JOIN kvio_runs(kvio_pick((SELECT 'kvio_batch' FROM kvio_filled WHERE name = 'kvio_pool'), (
  SELECT kvio_runs_gather(lid, ts, (SELECT batch_gap_ns FROM kvio_rule), ts_end, tid)
  FROM (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM kvio_filled WHERE name = 'kvio_pool'))
       CROSS JOIN kvio_pool_ordered_batches)));

-- kvio_qd: the pool's achieved queue depth: per label id, the sweep of its commands
-- with a real duration (+1 at submit, -1 at completion): the ns at each depth (rows
-- with depth, time: qd.sql), and the spans at depth <= kvio_rule's qd_low lasting at
-- least 1 ms (rows with start, end: findings.sql's QD<=1)
CREATE TEMP TABLE kvio_qd(lid INTEGER, depth INTEGER, time INTEGER, start INTEGER, end INTEGER);
CREATE TEMP VIEW kvio_qd_fill AS
SELECT k, depth, time, start, end
FROM (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM kvio_filled WHERE name = 'kvio_qd'))
     CROSS JOIN kvio_depth_and_spans(kvio_pick((SELECT 'kvio_qd' FROM kvio_filled WHERE name = 'kvio_pool'), (
  SELECT kvio_depth_gather(lid, ts, dur, (SELECT qd_low FROM kvio_rule), 1000000)
  FROM (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM kvio_filled WHERE name = 'kvio_pool'))
       CROSS JOIN kvio_pool_ordered_batches
  WHERE real = 1)));

-- The QD1 detector's rule (qd1.sql judges each label's objects together, findings.sql
-- each object): gaps between consecutive submits of a trace_id's tagged commands,
-- the object a "load" when its first command is a read, else a "store"; judged
-- against the service time, p25 of the real durations of the matching op (read for
-- load, write for store) over tagged commands: at QD1 the device is unloaded, so
-- its latency floor is the reference.
-- kvio_qd1_svc: the service time per (label id, load | store): kvio_latency's p25 (below;
-- fill it first) on the labels with tagged commands, whose pool is their tagged commands
CREATE TEMP VIEW kvio_qd1_svc AS
SELECT
  l.lid,
  CASE o.name WHEN 'read' THEN 'load' ELSE 'store' END AS op,
  l.p25 AS svc                                      -- service time (ns)
FROM kvio_latency l JOIN kvio_cmd_name o ON o.id = l.op_id
WHERE l.lid NOT IN (SELECT lid FROM kvio_pool_all);

-- kvio_qd1_gap: the gaps to judge, a shared gather (above) of one pass: per label
-- and class the gaps of its objects together (tid NULL: qd1.sql), and each
-- object's own (findings.sql); per trace_id with >= qd1_min_cmds tagged commands
CREATE TEMP TABLE kvio_qd1_gap(
  lid INTEGER,                                      -- label id
  tid,                                              -- the object's trace_id; NULL: the label's objects together
                                                    -- (no type, as kvio_object.tid: equal values index-join)
  op TEXT,                                          -- load | store
  gap_p50 INTEGER,                                  -- submit gap p50 (ns)
  gap_p95 INTEGER,                                  -- submit gap p95 (ns)
  n_objects INTEGER);                               -- objects behind the gaps
CREATE TEMP VIEW kvio_qd1_gap_fill AS
SELECT k, seq, CASE cls WHEN 1 THEN 'load' ELSE 'store' END, p50, p95, members
FROM (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM kvio_filled WHERE name = 'kvio_qd1_gap'))
     CROSS JOIN kvio_gaps(kvio_pick((SELECT 'kvio_qd1_gap' FROM kvio_filled WHERE name = 'kvio_pool'), (
  SELECT kvio_gaps_gather(lid, tid, ts, kvio_is(op, 'read'), (SELECT qd1_min_cmds FROM kvio_rule), 1) -- the class:
  FROM (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM kvio_filled WHERE name = 'kvio_pool'))
       CROSS JOIN kvio_command_ordered_batches        -- its first command is a read
  WHERE tid > 0)));

-- kvio_pool_gather: the four gathers above (kvio_qd1_gap's, kvio_latency's, kvio_qd's,
-- kvio_batch's) in one pass over the pool's commands, in submit order: one read of the
-- chunks, not four (findings.sql runs it first, then names kvio_pool in kvio_filled).
-- Each keeps its set on the connection (kvio_keep), which its fill view takes
-- (kvio_pick) instead of gathering while kvio_pool is filled (it skips their own
-- passes; a set kept before this prelude.sql ran, by a statement that failed
-- after the pass, is never taken: kvio_filled starts empty here). The same
-- rows: a WHERE term of a gather above is kvio_where(term, value) here, the rows the
-- aggregate skips (kvio_qd1_gap's tid > 0: the pool's tagged commands, the pool being
-- every tagged command of a label that has some; real = 1); kvio_latency's gathers
-- every op, its fill keeps read and write. Only while none of the four is filled (a
-- connection that filled one already gathers the others on their own), and nothing
-- is kept when there was no pass or no command (HAVING).
CREATE TEMP VIEW kvio_pool_gather AS
SELECT
  kvio_keep('kvio_qd1_gap', kvio_gaps_gather(lid, tid, kvio_where(tagged, ts), kvio_is(op, 'read'),
                                             (SELECT qd1_min_cmds FROM kvio_rule), 1)),
  kvio_keep('kvio_latency', kvio_pct_gather(lid, op_id, kvio_where(real, dur))),
  kvio_keep('kvio_qd', kvio_depth_gather(lid, ts, kvio_where(real, dur), (SELECT qd_low FROM kvio_rule), 1000000)),
  kvio_keep('kvio_batch', kvio_runs_gather(lid, ts, (SELECT batch_gap_ns FROM kvio_rule), ts_end, tid))
FROM (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM kvio_filled
                                   WHERE name IN ('kvio_pool', 'kvio_qd1_gap', 'kvio_latency', 'kvio_qd', 'kvio_batch')))
     CROSS JOIN kvio_pool_ordered_batches
HAVING count(*) > 0;

-- kvio_qd1_verdict: each row of kvio_qd1_gap judged. kind "serialized" when
-- gap_p50 >= qd1_ratio x service time; without completions (no service time)
-- "suspicious" when gap_p50 >= qd1_suspicious_ns; else "pipelined"
CREATE TEMP VIEW kvio_qd1_verdict AS
WITH svc AS MATERIALIZED (SELECT * FROM kvio_qd1_svc), judged AS (
  SELECT g.*, s.svc,
    CASE
      WHEN s.svc > 0 THEN CASE WHEN g.gap_p50 >= r.qd1_ratio * s.svc THEN 'serialized' ELSE 'pipelined' END
      ELSE CASE WHEN g.gap_p50 >= r.qd1_suspicious_ns THEN 'suspicious' ELSE 'pipelined' END
    END AS kind
  FROM kvio_qd1_gap g CROSS JOIN kvio_rule r
  LEFT JOIN svc s ON s.lid = g.lid AND s.op = g.op
)
SELECT
  *,                                                -- lid, tid, op, gap_p50, gap_p95, n_objects, svc, kind
  CASE kind
    WHEN 'serialized' THEN 'QD~1 (gap ~= service time — serialized)'
    WHEN 'suspicious' THEN 'QD~1 suspicious (gap >= 40us)'
    ELSE 'pipelined'
  END AS verdict                                    -- the report's words
FROM judged;

-- kvio_tp_gap: the TP all-rank-ready barrier, grouped by the key's fmt field (the
-- reference's heuristic: on MP-server captures the shard identity is the key's
-- second field). When a label's objects have more than one distinct fmt
-- (= shards): per (op, chunk) over store/load objects without error, seen on
-- every shard, the spread of the object ends (tp_barrier.sql's samples)
CREATE TEMP VIEW kvio_tp_gap AS
WITH shards AS MATERIALIZED (                      -- per label (a scan each, no sort)
  SELECT l.label, (SELECT kvio_count_distinct(o.fmt) FROM kvio_object o
                   WHERE o.label = l.label AND NOT o.failed AND o.fmt IS NOT NULL AND o.fmt <> '') AS n
  FROM (SELECT DISTINCT label FROM kvio_proc) l
), chunk_end AS (                                  -- (on the labels with shards only)
  SELECT label, op, chunk, count(*) AS n, min(ts + dur) AS t0, max(ts + dur) AS t1
  FROM kvio_object
  WHERE NOT failed AND chunk IS NOT NULL AND chunk <> '' AND op IN ('store', 'load')
    AND label IN (SELECT label FROM shards WHERE n > 1)
  GROUP BY label, op, chunk
)
SELECT
  c.label,
  c.op,                                             -- store | load
  c.chunk,                                          -- the key's chunk field
  c.t1 - c.t0 AS gap,                               -- last object end - first (ns)
  c.t0,                                             -- the first object end (ns)
  c.t1,                                             -- the last object end (ns)
  s.n AS shards                                     -- distinct fmt values of the label
FROM chunk_end c JOIN shards s ON s.label = c.label
WHERE s.n > 1 AND c.n = s.n;

-- For the html_*.sql pictures (kvio-report --html), which draw samples:
-- kvio_sample: values to take percentiles of, by (label, grp). Fill it with
-- DELETE, then one INSERT ... ORDER BY label, grp, v: its rows are then numbered
-- (pos) in sorted order, each group contiguous, and a percentile is one lookup
-- by position (no window function: SQLite's sorter runs once per analysis).
CREATE TEMP TABLE kvio_sample(pos INTEGER PRIMARY KEY, label, grp TEXT, v); -- label: a name, or a lid

-- kvio_grp: each kvio_sample group's first position and size, from the rows
-- whose neighbour belongs to another group (a scan, no sort)
CREATE TEMP VIEW kvio_grp AS
WITH bound AS (
  SELECT s.label, s.grp, s.pos
  FROM kvio_sample s
  LEFT JOIN kvio_sample p ON p.pos = s.pos - 1
  LEFT JOIN kvio_sample x ON x.pos = s.pos + 1
  WHERE p.pos IS NULL OR p.label IS NOT s.label OR p.grp IS NOT s.grp
     OR x.pos IS NULL OR x.label IS NOT s.label OR x.grp IS NOT s.grp
)
SELECT label, grp, min(pos) AS first, max(pos) - min(pos) + 1 AS n FROM bound GROUP BY label, grp;

-- kvio_cdf_q: the quantiles a drawn CDF (sql/html_*.sql) is sampled at:
-- k/200 for k = 0..200, then the tail 0.991..0.999 by 0.001, 0.9995, 0.9999
CREATE TEMP TABLE kvio_cdf_q(q REAL PRIMARY KEY);
WITH RECURSIVE k(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k < 200)
INSERT INTO kvio_cdf_q SELECT k / 200.0 FROM k
UNION SELECT (990 + k) / 1000.0 FROM k WHERE k BETWEEN 1 AND 9
UNION VALUES (0.9995), (0.9999);

-- kvio_cdf_grid: kvio_cdf_q as the grid argument of kvio_quantiles (the extension): a
-- drawn CDF is, per group of a kvio_pct_gather set, the sorted value at each distinct pct
-- position rank = min(n - 1, floor(q * n)) and the share (rank + 1) / n of the group at or
-- below it: at most 211 points per group whatever its size.
CREATE TEMP VIEW kvio_cdf_grid AS SELECT group_concat(q, ',') AS grid FROM kvio_cdf_q;
