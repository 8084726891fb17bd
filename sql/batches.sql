-- batches.sql — submission batches inferred without producer events.
-- The pool's submits in time order, split wherever the gap to the previous
-- submit exceeds :batch_gap_ns (default 50000 ns = kvio-report --batch-gap-us 50).
-- Inputs: kvio_pool, kvio_sample, kvio_pct (prelude.sql).
DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
WITH sub AS (
  SELECT label, ts, id,
    CASE WHEN ts - lag(ts) OVER w > coalesce(:batch_gap_ns, 50000) THEN 1 ELSE 0 END AS starts
  FROM kvio_pool
  WINDOW w AS (PARTITION BY label ORDER BY ts, id)
), numbered AS (
  SELECT label, sum(starts) OVER (PARTITION BY label ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS batch
  FROM sub
)
SELECT label, 'size', count(*) FROM numbered GROUP BY label, batch
ORDER BY 1, 2, 3;
SELECT
  label,
  n,                                               -- batches
  p50 AS size_p50,                                 -- commands per batch
  p95 AS size_p95,
  max AS size_max
FROM kvio_pct
ORDER BY label;
