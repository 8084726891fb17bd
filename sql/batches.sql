-- batches.sql — submission batches inferred without producer events.
-- The pool's submits in time order, split wherever the gap to the previous
-- submit exceeds kvio_rule's batch_gap_ns (:batch_gap_ns, default 50000 ns =
-- kvio-report --batch-gap-us 50); kvio_runs_gather gives each label's run
-- lengths (docs/database.md). findings.sql lists the same runs (kvio_runs).
-- Inputs: kvio_pool_ordered_batches, kvio_proc, kvio_rule (prelude.sql); kvio_pct (the extension).
SELECT
  p.label,
  b.n,                                             -- batches
  b.p50 AS size_p50,                               -- commands per batch
  b.p95 AS size_p95,
  b.max AS size_max
FROM kvio_pct((SELECT kvio_runs_gather(lid, ts, (SELECT batch_gap_ns FROM kvio_rule)) FROM kvio_pool_ordered_batches)) b
JOIN kvio_proc p ON p.upid = b.k1
ORDER BY p.label;
