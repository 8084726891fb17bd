-- html_batches.sql — inferred batch sizes as a histogram (kvio-report --html).
-- Run after batches.sql: it counts that file's samples (kvio_sample group
-- size: submits per batch at :batch_gap_ns), one point per size seen.
-- Inputs: kvio_sample as batches.sql leaves it.
SELECT
  'batch:size' AS chart,
  label,                                           -- arm
  '' AS role,
  v AS x,                                          -- commands in the batch
  count(*) AS y                                    -- batches of that size
FROM kvio_sample
WHERE grp = 'size'
GROUP BY label, v
ORDER BY chart, label, role, x;
