-- html_batches.sql — inferred batch sizes as a histogram (kvio-report --html).
-- It counts batches.sql's samples: the same gathering (kvio_runs_gather: each
-- label's pool submits in time order, split wherever the gap to the previous
-- exceeds kvio_rule's batch_gap_ns, default 50000 ns), one point per batch size
-- seen with the number of batches of that size (kvio_values).
-- Inputs: kvio_pool_ordered_batches, kvio_proc, kvio_rule (prelude.sql); kvio_runs_gather,
-- kvio_values (the extension).
SELECT
  'batch:size' AS chart,
  (SELECT label FROM kvio_proc WHERE upid = b.k1) AS label, -- arm
  '' AS role,
  b.v AS x,                                        -- commands in the batch
  b.count AS y                                     -- batches of that size
FROM kvio_values((SELECT kvio_runs_gather(lid, ts, (SELECT batch_gap_ns FROM kvio_rule)) FROM kvio_pool_ordered_batches)) b
ORDER BY chart, label, role, x;
