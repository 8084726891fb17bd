-- objects.sql — KV object spans per label and op (store, load, delete).
-- Over objects without an error. Span = object slice: op start (schema-2
-- ts_start, else the first device command) to op end.
--   span_p50/p99   object span (ns): kvio_object_span (prelude.sql), which
--                  findings.sql's slow objects (span > span_p99) read too
--   eff_mbs_p50    bytes / span in MB/s (10^6 B/s), objects with span > 0
--   presubmit_p50  first tagged command of the object's trace_id - object begin
--                  (ns): the producer's time before the device sees any IO
--   presubmit_own_p50  the object's own first command - object begin (ns): the
--                  same per occurrence (its flow to its first command, as the
--                  timeline shows it); presubmit_p50 measures a later object of
--                  a repeated trace_id from the first one's command
-- (Objects with an error: failed.sql.)
-- (Under a window, presubmit_own_p50 counts the objects whose first command is in it, as an
-- ingest with the same window keeps their flows.)
-- Inputs: kvio_object, kvio_object_span, kvio_command_batches, kvio_command, kvio_proc
-- (prelude.sql), flow; kvio_pct, kvio_groups (the extension).
WITH ok AS (
  SELECT * FROM kvio_object
  WHERE NOT failed AND op IN ('store', 'load', 'delete')
), first_cmd AS MATERIALIZED (                     -- per (label, trace_id): the first submit
  SELECT p.label, f.k2 AS tid, f.min AS t0
  FROM kvio_groups((SELECT kvio_group_gather(lid, tid, ts) FROM kvio_command_batches WHERE tid > 0)) f
  JOIN kvio_proc p ON p.upid = f.k1
), sample AS (
  SELECT label, 'mbs:' || op AS grp, coalesce(bytes, 0) / max(1e-9, dur / 1e9) / 1e6 AS v FROM ok WHERE dur <> 0
  UNION ALL
  SELECT ok.label, 'pre:' || ok.op, f.t0 - ok.ts FROM ok JOIN first_cmd f ON f.label = ok.label AND f.tid = ok.tid
  UNION ALL                                        -- the flow object -> its first command
  SELECT ok.label, 'own:' || ok.op, c.ts - ok.ts FROM ok JOIN flow f ON f.slice_out = ok.id JOIN kvio_command c ON c.id = f.slice_in
), pct AS MATERIALIZED (
  SELECT k1 AS label, k2 AS grp, * FROM kvio_pct((SELECT kvio_pct_gather(label, grp, v) FROM sample))
)
SELECT
  s.label,
  s.op,                                            -- store | load | delete
  s.n,                                             -- objects
  s.p50 AS span_p50,
  s.p99 AS span_p99,
  m.p50 AS eff_mbs_p50,
  p.p50 AS presubmit_p50,
  w.p50 AS presubmit_own_p50
FROM kvio_object_span s
LEFT JOIN pct m ON m.label = s.label AND m.grp = 'mbs:' || s.op
LEFT JOIN pct p ON p.label = s.label AND p.grp = 'pre:' || s.op
LEFT JOIN pct w ON w.label = s.label AND w.grp = 'own:' || s.op
ORDER BY s.label, CASE s.op WHEN 'store' THEN 0 WHEN 'load' THEN 1 ELSE 2 END;
