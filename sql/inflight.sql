-- inflight.sql — kvio-report --watch: the objects in flight at the window's
-- end (:win_hi), per label (a label without any has no row).
--   n          objects in flight: trace_ids whose tagged commands are in the
--              window while no object slice of theirs is (its semantic record
--              has not been written yet: an ingest writes an object once it
--              ends), and object slices that never ended (dur < 0)
--   oldest_ns  the oldest one's age at the window's end: :win_hi - its first
--              command's submit (or its begin) (ns)
-- Inputs: kvio_command_batches, kvio_proc, kvio_object (prelude.sql); kvio_groups.
CREATE INDEX IF NOT EXISTS temp.kvio_object_tid ON kvio_object(label, tid, id); -- as findings.sql's

WITH first_cmd AS MATERIALIZED (                   -- per (label id, trace_id): the first submit
  SELECT f.k1 AS lid, f.k2 AS tid, f.min AS t0
  FROM kvio_groups((SELECT kvio_group_gather(lid, tid, ts) FROM kvio_command_batches WHERE tid > 0)) f
), open AS (
  SELECT p.label, c.t0 FROM first_cmd c JOIN kvio_proc p ON p.upid = c.lid
  WHERE NOT EXISTS (SELECT 1 FROM kvio_object o WHERE o.label = p.label AND o.tid = c.tid)
  UNION ALL
  SELECT label, ts FROM kvio_object WHERE dur < 0
)
SELECT
  label,
  count(*) AS n,                                   -- objects in flight
  :win_hi - min(t0) AS oldest_ns                   -- the oldest one's age at the window's end (ns)
FROM open
GROUP BY label
ORDER BY label;
