-- prelude.sql — shared inputs of every kvio analysis (run it first).
--
-- Plain SQL over trace_processor's tables (process, process_track, slice,
-- extract_arg), so the same text runs on a kvio trace.db (sqlite3 + kvio's
-- extension) and in trace_processor on an exported .pftrace. Creates TEMP
-- tables only; safe to run again.
--
-- Labels: process names are "LMCache <label>", "NVMe <dev> <label>",
-- "Serving <label>".
-- The pool: a label's commands with trace_id != 0, or all of its commands
-- when none is tagged (transports without a user_data channel).
-- The window (kvio-report --time-range / --trace-id): :win_lo/:win_hi (ns) keep
-- the command and object slices overlapping [lo, hi] (edges inclusive),
-- :win_tlo/:win_thi those of trace_ids lo..hi (an untagged command never);
-- unbound (NULL) bounds keep everything.
-- Percentile, everywhere: pct(xs, q) = sorted(xs)[min(n - 1, floor(q * n))];
-- kvio_pct below is the one place that computes it.

DROP TABLE IF EXISTS temp.kvio_proc;
DROP TABLE IF EXISTS temp.kvio_cmd_track;
DROP TABLE IF EXISTS temp.kvio_command;
DROP TABLE IF EXISTS temp.kvio_pool_all;
DROP TABLE IF EXISTS temp.kvio_object;
DROP TABLE IF EXISTS temp.kvio_sample;
DROP VIEW IF EXISTS temp.kvio_pool;
DROP VIEW IF EXISTS temp.kvio_pct;
DROP VIEW IF EXISTS temp.kvio_grp;
DROP VIEW IF EXISTS temp.kvio_cdf;
DROP TABLE IF EXISTS temp.kvio_cdf_q;

-- kvio_proc: every capture process and its label
CREATE TEMP TABLE kvio_proc AS
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

-- kvio_cmd_track: the command tracks (writes*, reads*, other*, untagged*) and
-- their labels; a handful of rows, so each command slice finds its label by
-- one key lookup instead of a track-name match per slice
CREATE TEMP TABLE kvio_cmd_track(id INTEGER PRIMARY KEY, label TEXT);
INSERT INTO kvio_cmd_track
SELECT pt.id, p.label
FROM process_track pt
JOIN kvio_proc p USING (upid)
WHERE pt.name LIKE 'writes%' OR pt.name LIKE 'reads%'
   OR pt.name LIKE 'other%' OR pt.name LIKE 'untagged%';

-- kvio_command: one row per NVMe command slice
CREATE TEMP TABLE kvio_command AS
SELECT
  t.label,
  s.id,
  s.ts,                                             -- submit time (ns)
  s.dur,                                            -- real or nominal duration (ns)
  s.name AS op,                                     -- op_name: read, write, ...
  extract_arg(s.arg_set_id, 'debug.trace_id') AS tid, -- user_data >> 32; NULL when 0
  coalesce(extract_arg(s.arg_set_id, 'debug.trace_id'), 0) <> 0 AS tagged,
  extract_arg(s.arg_set_id, 'debug.slba') AS slba,  -- start LBA
  extract_arg(s.arg_set_id, 'debug.data_len') AS dlen, -- bytes
  extract_arg(s.arg_set_id, 'debug.role') AS role,  -- header | payload (store objects)
  coalesce(extract_arg(s.arg_set_id, 'debug.real_dur'), 0) AS real -- 1: dur from a completion
FROM slice s
JOIN kvio_cmd_track t ON t.id = s.track_id
WHERE (:win_hi IS NULL OR s.ts <= :win_hi) AND (:win_lo IS NULL OR s.ts + s.dur >= :win_lo)
  AND (:win_tlo IS NULL OR extract_arg(s.arg_set_id, 'debug.trace_id') BETWEEN :win_tlo AND :win_thi);

-- kvio_pool_all: labels whose pool is all commands (none tagged)
CREATE TEMP TABLE kvio_pool_all AS
SELECT label FROM kvio_command GROUP BY label HAVING sum(tagged) = 0;

-- kvio_pool: the commands the per-command analyses run over
CREATE TEMP VIEW kvio_pool AS
SELECT * FROM kvio_command
WHERE tagged OR label IN (SELECT label FROM kvio_pool_all);

-- kvio_object: one row per KV object span (slices on objects* tracks)
CREATE TEMP TABLE kvio_object AS
SELECT
  p.label,
  s.id,
  s.ts,                                             -- object begin (ns)
  s.dur,                                            -- span (ns)
  s.name,
  extract_arg(s.arg_set_id, 'debug.trace_id') AS tid,
  extract_arg(s.arg_set_id, 'debug.op') AS op,      -- store | load | delete
  extract_arg(s.arg_set_id, 'debug.bytes') AS bytes,
  extract_arg(s.arg_set_id, 'debug.n_cmds') AS n_cmds,
  extract_arg(s.arg_set_id, 'debug.fmt') AS fmt,    -- key field 2 (shard identity on MP captures)
  extract_arg(s.arg_set_id, 'debug.chunk') AS chunk, -- key field 4, 12 chars
  extract_arg(s.arg_set_id, 'debug.key') AS key,    -- last 24 chars of the key
  extract_arg(s.arg_set_id, 'debug.error') AS error, -- set on failed ops
  extract_arg(s.arg_set_id, 'debug.tp_rank') AS tp_rank,   -- decoded shard rank (kvio)
  extract_arg(s.arg_set_id, 'debug.tp_world') AS tp_world, -- decoded world size (kvio)
  extract_arg(s.arg_set_id, 'debug.tp_chunk') AS tp_chunk  -- decoded chunk id (kvio)
FROM slice s
JOIN process_track pt ON s.track_id = pt.id
JOIN kvio_proc p USING (upid)
WHERE pt.name LIKE 'objects%'
  AND (:win_hi IS NULL OR s.ts <= :win_hi) AND (:win_lo IS NULL OR s.ts + s.dur >= :win_lo)
  AND (:win_tlo IS NULL OR extract_arg(s.arg_set_id, 'debug.trace_id') BETWEEN :win_tlo AND :win_thi);

-- kvio_sample: values to take percentiles of, by (label, grp). Fill it with
-- DELETE, then one INSERT ... ORDER BY label, grp, v: its rows are then numbered
-- (pos) in sorted order, each group contiguous, and a percentile is one lookup
-- by position (no window function: SQLite's sorter runs once per analysis).
CREATE TEMP TABLE kvio_sample(pos INTEGER PRIMARY KEY, label TEXT, grp TEXT, v);

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

-- kvio_pct: the percentiles of kvio_sample, pct(xs, q) = sorted(xs)[min(n - 1, floor(q * n))]
CREATE TEMP VIEW kvio_pct AS
SELECT
  label,
  grp,
  n,                                                                    -- samples
  (SELECT v FROM kvio_sample WHERE pos = first + min(n - 1, CAST(0.25 * n AS INTEGER))) AS p25,
  (SELECT v FROM kvio_sample WHERE pos = first + min(n - 1, CAST(0.50 * n AS INTEGER))) AS p50,
  (SELECT v FROM kvio_sample WHERE pos = first + min(n - 1, CAST(0.95 * n AS INTEGER))) AS p95,
  (SELECT v FROM kvio_sample WHERE pos = first + min(n - 1, CAST(0.99 * n AS INTEGER))) AS p99,
  (SELECT v FROM kvio_sample WHERE pos = first + n - 1) AS max
FROM kvio_grp;

-- kvio_cdf_q: the quantiles a drawn CDF (sql/html_*.sql) is sampled at:
-- k/200 for k = 0..200, then the tail 0.991..0.999 by 0.001, 0.9995, 0.9999
CREATE TEMP TABLE kvio_cdf_q(q REAL PRIMARY KEY);
WITH RECURSIVE k(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k < 200)
INSERT INTO kvio_cdf_q SELECT k / 200.0 FROM k
UNION SELECT (990 + k) / 1000.0 FROM k WHERE k BETWEEN 1 AND 9
UNION VALUES (0.9995), (0.9999);

-- kvio_cdf: the empirical CDF of each kvio_sample group, downsampled: for each
-- grid quantile q the sample at pct position idx = min(n - 1, floor(q * n)),
-- each position once; the sorted sample idx and the share of samples at or
-- below it. At most 211 points per group whatever its size.
CREATE TEMP VIEW kvio_cdf AS
SELECT
  i.label,
  i.grp,
  s.v,                                                                  -- sample value
  (i.pos - i.first + 1) * 1.0 / i.n AS frac                             -- share of the group <= v
FROM (SELECT DISTINCT g.label, g.grp, g.first, g.n, g.first + min(g.n - 1, CAST(q.q * g.n AS INTEGER)) AS pos
      FROM kvio_grp g, kvio_cdf_q q) i
JOIN kvio_sample s ON s.pos = i.pos;
