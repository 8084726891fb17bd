-- batches.sql — submission batches inferred without producer events.
-- The pool's submits in time order, split wherever the gap to the previous
-- submit exceeds kvio_rule's batch_gap_ns (:batch_gap_ns, default 50000 ns =
-- kvio-report --batch-gap-us 50): prelude.sql's kvio_batch, one row per batch
-- (kvio_runs_gather, docs/database.md; findings.sql lists the same batches);
-- here each label's batch count and sizes.
-- Inputs: kvio_batch, kvio_filled, kvio_proc (prelude.sql); kvio_pct (the extension).
INSERT INTO kvio_batch SELECT * FROM kvio_batch_fill;
INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_batch');

SELECT
  p.label,
  b.n,                                             -- batches
  b.p50 AS size_p50,                               -- commands per batch
  b.p95 AS size_p95,
  b.max AS size_max
FROM kvio_pct((SELECT kvio_pct_gather(lid, NULL, n) FROM kvio_batch)) b
JOIN kvio_proc p ON p.upid = b.k1
ORDER BY p.label;
