-- findings.sql — what the report found, one row per finding: the slices of the
-- "kvio findings" tracks that kvio-export and kvio2perfetto add to the trace,
-- and the counts of kvio-report's "findings" key. Each finding is selected by
-- the rule of the report's verdict or metric, read from where the report's
-- file reads it (prelude.sql), so the trace and the report agree:
--   qd1_load, qd1_store   objects the QD1 detector (qd1.sql) judges serialized on
--                         their own gaps (>= 4 tagged commands; kvio_qd1_verdict:
--                         gap p50 >= 0.5 x the class's service time): one row per
--                         run of them, objects that follow each other in start
--                         order among all of the label's objects
--   qd1_load_suspicious,  the same without completions (no service time): gap
--   qd1_store_suspicious  p50 >= 40 us
--   qd_le1                the achieved queue depth (qd.sql's sweep) stayed <= 1
--                         (kvio_rule's qd_low) for longer than 1 ms while commands
--                         were pending: while an object of the label with device
--                         commands was in flight
--   batch                 inferred batches (batches.sql's runs at :batch_gap_ns) of
--                         more than one command; on a label with more than 10,000
--                         batches only those above its size_p95
--   batch_singles         runs of consecutive one-command batches (one row each)
--   slow_object           objects without an error above their op's span_p99 (objects.sql)
--   failed                failed ops (failed.sql)
--   tp_barrier            TP barrier chunks whose all-rank skew is above the label's
--                         p95 of them (tp_barrier.sql's samples)
-- A row's obj is the object a finding points at (the exported trace links the
-- finding to it by a flow): a run's first object, a batch's first command's
-- object, the object in flight where a QD<=1 span starts, a TP chunk's last
-- object to end. Times are the database's ns.
-- Inputs: kvio_command_ordered_batches, kvio_pool_ordered_batches, kvio_cmd_proc,
-- kvio_proc, kvio_object, kvio_object_span, kvio_rule, kvio_pool_gather, kvio_qd1_gap, kvio_latency,
-- kvio_batch, kvio_qd, kvio_filled, kvio_qd1_verdict, kvio_tp_gap (prelude.sql); kvio_pct,
-- kvio_is, kvio_runs, kvio_depth_spans (the extension).
CREATE INDEX IF NOT EXISTS temp.kvio_object_id ON kvio_object(id);
CREATE INDEX IF NOT EXISTS temp.kvio_object_ts ON kvio_object(label, ts);

-- kvio_find_tid: each trace_id's first object (its lowest slice id) and its begin
DROP TABLE IF EXISTS temp.kvio_find_tid;
CREATE TEMP TABLE kvio_find_tid(label TEXT, tid, obj INTEGER, obj_ts INTEGER, PRIMARY KEY (label, tid)) WITHOUT ROWID;
INSERT INTO kvio_find_tid
SELECT label, tid, min(id), ts FROM kvio_object WHERE tid IS NOT NULL GROUP BY label, tid; -- ts: min(id)'s row

-- the four gathers below in one pass over the commands (prelude.sql's kvio_pool_gather), unless
-- this connection filled one of them already
INSERT OR IGNORE INTO kvio_filled SELECT 'kvio_pool' FROM kvio_pool_gather;

INSERT INTO kvio_latency SELECT * FROM kvio_latency_fill; -- the QD1 service time's (kvio_qd1_verdict)
INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_latency');

-- The QD1 detector's gaps of each object (prelude.sql's kvio_qd1_gap: a sequence per trace_id)
INSERT INTO kvio_qd1_gap SELECT * FROM kvio_qd1_gap_fill;
INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_qd1_gap');

-- kvio_find_qd1: runs of the objects judged serialized (or suspicious): those of one
-- class and kind that follow each other in start order among all of the label's
-- objects (any other object between them ends a run), each with the median of its
-- objects' gap p50
DROP TABLE IF EXISTS temp.kvio_find_judged;
CREATE TEMP TABLE kvio_find_judged(obj INTEGER PRIMARY KEY, op TEXT, kind TEXT, gap_p50 INTEGER, svc INTEGER);
INSERT INTO kvio_find_judged                       -- each object judged not pipelined (its trace_id's first slice)
SELECT t.obj, v.op, v.kind, v.gap_p50, v.svc
FROM kvio_qd1_verdict v
JOIN kvio_proc p ON p.upid = v.lid
JOIN kvio_find_tid t ON t.label = p.label AND t.tid = v.tid
WHERE v.tid IS NOT NULL AND v.kind <> 'pipelined';
DROP TABLE IF EXISTS temp.kvio_find_qd1;
CREATE TEMP TABLE kvio_find_qd1 AS
WITH seq AS (                                      -- every object of a label that has one, in start order
  SELECT o.label, o.id, o.ts, o.dur, o.tid, o.n_cmds, j.op, j.kind, j.gap_p50, j.svc,
    lag(j.op || j.kind) OVER (PARTITION BY o.label ORDER BY o.ts, o.id) AS prev
  FROM kvio_object o LEFT JOIN kvio_find_judged j ON j.obj = o.id
  WHERE o.label IN (SELECT x.label FROM kvio_find_judged j2 JOIN kvio_object x ON x.id = j2.obj) -- labels with some
), runs AS (                                       -- a new run at each object that does not continue one
  SELECT *, sum(kind IS NULL OR prev IS NOT op || kind) OVER (PARTITION BY label ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS run
  FROM seq
), member AS (
  SELECT *, row_number() OVER (PARTITION BY label, run ORDER BY ts, id) AS rn FROM runs WHERE kind IS NOT NULL
), gap AS MATERIALIZED (                           -- per run: the median of its objects' gap p50
  SELECT k1 AS label, k2 AS run, p50 FROM kvio_pct((SELECT kvio_pct_gather(label, run, gap_p50) FROM member))
), agg AS (
  SELECT
    label, op, kind, run,
    min(ts) AS ts,                                 -- the first object's begin (ns)
    max(ts + dur) - min(ts) AS dur,                -- to the last object's end (ns)
    max(CASE WHEN rn = 1 THEN id END) AS obj,      -- the first object
    max(CASE WHEN rn = 1 THEN ts END) AS obj_ts,   -- its begin
    max(CASE WHEN rn = 1 THEN tid END) AS trace_id,
    count(*) AS n_objects,
    sum(n_cmds) AS n_cmds,
    max(svc) AS svc_ns                             -- the class's service time (ns), NULL without completions
  FROM member
  GROUP BY label, run
)
SELECT a.*, g.p50 AS gap_p50_ns FROM agg a JOIN gap g ON g.label = a.label AND g.run = a.run;

-- kvio_find_low: the label's spans at achieved depth <= qd_low lasting at least 1 ms
DROP TABLE IF EXISTS temp.kvio_find_low;
INSERT INTO kvio_qd SELECT * FROM kvio_qd_fill;      -- prelude.sql's sweep (qd.sql's)
INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_qd');
CREATE TEMP TABLE kvio_find_low AS
SELECT p.label, l.start, l.end
FROM kvio_qd l JOIN kvio_proc p ON p.upid = l.lid
WHERE l.start IS NOT NULL;

-- kvio_find_busy: when commands were pending: the union of the label's spans of
-- objects with device commands, as disjoint intervals [s, e)
DROP TABLE IF EXISTS temp.kvio_find_busy;
CREATE TEMP TABLE kvio_find_busy(label TEXT, s INTEGER, e INTEGER, PRIMARY KEY (label, s));
INSERT INTO kvio_find_busy
WITH span AS (
  SELECT label, ts AS s, ts + dur AS e FROM kvio_object
  WHERE dur > 0 AND n_cmds > 0 AND label IN (SELECT label FROM kvio_find_low)
), reach AS (                                      -- the latest end before each span
  SELECT *, max(e) OVER (PARTITION BY label ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pe
  FROM span
), island AS (                                     -- a new interval where no earlier span reaches
  SELECT *, sum(pe IS NULL OR pe < s) OVER (PARTITION BY label ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS k
  FROM reach
)
SELECT label, min(s), max(e) FROM island GROUP BY label, k;

-- kvio_find_batch: every inferred batch (prelude.sql's kvio_batch, batches.sql's), numbered
-- in order (each label's in start order); tid without a type, as kvio_object's
INSERT INTO kvio_batch SELECT * FROM kvio_batch_fill;
INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_batch');
DROP TABLE IF EXISTS temp.kvio_find_batch;
CREATE TEMP TABLE kvio_find_batch(pos INTEGER PRIMARY KEY, label TEXT, start INTEGER, end INTEGER, n INTEGER, tid);
INSERT INTO kvio_find_batch(label, start, end, n, tid)
SELECT p.label, b.start, b.end, b.n, b.tid
FROM kvio_batch b CROSS JOIN kvio_proc p ON p.upid = b.lid
ORDER BY b.pos;

WITH qd_low AS (                                   -- the low spans where objects were in flight
  SELECT l.label, max(l.start, b.s) AS ts, min(l.end, b.e) - max(l.start, b.s) AS dur
  FROM kvio_find_low l
  JOIN kvio_find_busy b ON b.label = l.label AND b.s < l.end AND b.e > l.start
   AND b.s >= coalesce((SELECT max(x.s) FROM kvio_find_busy x WHERE x.label = l.label AND x.s <= l.start), l.start)
  WHERE min(l.end, b.e) - max(l.start, b.s) > 1000000
), qd_low_obj AS (                                 -- and the object in flight where each starts
  SELECT q.*, (SELECT o.id FROM kvio_object o WHERE o.label = q.label AND o.ts <= q.ts AND o.ts + o.dur > q.ts
                 AND o.n_cmds > 0 ORDER BY o.ts DESC LIMIT 1) AS obj
  FROM qd_low q
), batch_stat AS MATERIALIZED (                    -- per label: batches, size_p95 (batches.sql's)
  SELECT k1 AS label, n AS n_batches, p95 FROM kvio_pct((SELECT kvio_pct_gather(label, NULL, n) FROM kvio_find_batch))
), singles AS (                                   -- runs of one-command batches: consecutive positions
  SELECT b.label, b.start AS ts, r.end - b.start AS dur, r.n AS n_batches, r.tag AS tid
  FROM kvio_runs((SELECT kvio_runs_gather(label, pos, 1, end, tid) FROM kvio_find_batch WHERE n = 1)) r
  JOIN kvio_find_batch b ON b.pos = r.start
), span AS MATERIALIZED (
  SELECT * FROM kvio_object_span
), tp AS MATERIALIZED (
  SELECT * FROM kvio_tp_gap
), tp_p95 AS MATERIALIZED (
  SELECT k1 AS label, p95 FROM kvio_pct((SELECT kvio_pct_gather(label, NULL, gap) FROM tp))
), finding AS (
  SELECT label, 'qd1_' || op || CASE kind WHEN 'suspicious' THEN '_suspicious' ELSE '' END AS kind,
    CASE kind WHEN 'suspicious' THEN 'QD~1? ' ELSE 'QD~1 ' END || op AS track,
    ts, dur,
    CASE kind
      WHEN 'suspicious' THEN printf('QD~1? %s%s: gap p50 %.1fus, no completions', op,
                                    CASE WHEN n_objects > 1 THEN ' x' || n_objects ELSE '' END, gap_p50_ns / 1e3)
      ELSE printf('QD~1 %s%s: gap p50 %.1fus ~ svc %.1fus', op, CASE WHEN n_objects > 1 THEN ' x' || n_objects ELSE '' END,
                  gap_p50_ns / 1e3, svc_ns / 1e3)
    END AS name,
    obj, obj_ts, trace_id, n_objects, n_cmds, NULL AS n_batches, gap_p50_ns, svc_ns, NULL AS span_ns, NULL AS p99_ns,
    NULL AS size_p95, NULL AS p95_ns, op, NULL AS chunk, NULL AS error
  FROM kvio_find_qd1
  UNION ALL
  SELECT q.label, 'qd_le1', 'QD<=1', q.ts, q.dur, printf('QD<=1 for %.2fms', q.dur / 1e6),
    q.obj, o.ts, o.tid, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
  FROM qd_low_obj q LEFT JOIN kvio_object o ON o.id = q.obj
  UNION ALL
  SELECT b.label, 'batch', 'batches', b.start, b.end - b.start, printf('batch %d cmds', b.n),
    t.obj, t.obj_ts, b.tid, NULL, b.n, NULL, NULL, NULL, NULL, NULL, s.p95, NULL, NULL, NULL, NULL
  FROM kvio_find_batch b JOIN batch_stat s ON s.label = b.label
  LEFT JOIN kvio_find_tid t ON t.label = b.label AND t.tid = b.tid
  WHERE b.n > 1 AND (s.n_batches <= 10000 OR b.n > s.p95)
  UNION ALL
  SELECT g.label, 'batch_singles', 'batches', g.ts, g.dur,
    CASE n_batches WHEN 1 THEN 'batch 1 cmd' ELSE printf('%d batches of 1 cmd', n_batches) END,
    t.obj, t.obj_ts, g.tid, NULL, n_batches, n_batches, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
  FROM singles g LEFT JOIN kvio_find_tid t ON t.label = g.label AND t.tid = g.tid
  UNION ALL
  SELECT o.label, 'slow_object', 'slow objects', o.ts, o.dur,
    printf('slow %s %.2fms > p99 %.2fms', o.op, o.dur / 1e6, s.p99 / 1e6),
    o.id, o.ts, o.tid, NULL, o.n_cmds, NULL, NULL, NULL, o.dur, s.p99, NULL, NULL, o.op, NULL, NULL
  FROM kvio_object o JOIN span s ON s.label = o.label AND s.op = o.op
  WHERE NOT o.failed AND o.dur > s.p99
  UNION ALL
  SELECT label, 'failed', 'failed ops', ts, dur, printf('failed %s: %s', op, CAST(error AS TEXT)),
    id, ts, tid, NULL, n_cmds, NULL, NULL, NULL, NULL, NULL, NULL, NULL, op, NULL, CAST(error AS TEXT)
  FROM kvio_object WHERE failed
  UNION ALL
  SELECT t.label, 'tp_barrier', 'TP barrier', t.t0, t.gap, printf('TP barrier skew %.2fms', t.gap / 1e6),
    t.obj, o.ts, o.tid, t.shards, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    p.p95, t.op, t.chunk, NULL
  FROM (SELECT tp.*, (SELECT o.id FROM kvio_object o WHERE o.label = tp.label AND o.op = tp.op AND o.chunk = tp.chunk
                        AND NOT o.failed ORDER BY o.ts + o.dur DESC, o.id LIMIT 1) AS obj FROM tp) t
  JOIN tp_p95 p ON p.label = t.label
  LEFT JOIN kvio_object o ON o.id = t.obj
  WHERE t.gap > p.p95
)
SELECT
  label,
  kind,                                            -- the finding's kind (the report's JSON key)
  track,                                           -- its track in the trace's "kvio findings" group
  ts,                                              -- begin (ns)
  dur,                                             -- length (ns; 0: an instant)
  name,                                            -- the slice's name, with its numbers
  obj,                                             -- the object's slice id it points at (NULL: none)
  obj_ts,                                          -- that object's begin (ns)
  trace_id,                                        -- that object's trace_id
  n_objects,                                       -- objects of a QD~1 run; TP: shards
  n_cmds,                                          -- device commands (of a run's objects, of a batch)
  n_batches,                                       -- one-command batches of a run of them
  gap_p50_ns,                                      -- QD~1: the median of the run's objects' submit gap p50 (ns)
  svc_ns,                                          -- QD~1: the service time (ns)
  span_ns,                                         -- a slow object's span (ns)
  p99_ns,                                          -- its op's span p99 (ns)
  size_p95,                                        -- a batch's label's batch size p95 (commands)
  p95_ns,                                          -- TP: the label's skew p95 (ns)
  op,                                              -- the object's op
  chunk,                                           -- TP: the key's chunk field
  error                                            -- a failed op's error
FROM finding
ORDER BY label, CASE kind
  WHEN 'qd1_load' THEN 1 WHEN 'qd1_store' THEN 2 WHEN 'qd1_load_suspicious' THEN 3 WHEN 'qd1_store_suspicious' THEN 4
  WHEN 'qd_le1' THEN 5 WHEN 'batch' THEN 6 WHEN 'batch_singles' THEN 6 WHEN 'slow_object' THEN 7
  WHEN 'failed' THEN 8 ELSE 9 END, ts, obj, kind;
