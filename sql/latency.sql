-- latency.sql — per-command device latency percentiles per label and op.
-- Over the pool's commands whose duration is real (completion - submit, from
-- the tracer's nvme_uring_cmd_end_io probe); ops read and write only.
-- Inputs: kvio_pool_batches, kvio_proc (prelude.sql), kvio_cmd_name; kvio_pct (the extension).
SELECT
  p.label,
  o.name AS op,                                    -- read | write
  l.n,                                             -- commands with a real duration
  l.p50, l.p95, l.p99, l.max                       -- latency (ns)
FROM kvio_pct((SELECT kvio_pct_gather(lid, op_id, dur) FROM kvio_pool_batches WHERE real = 1 AND op IN ('read', 'write'))) l
JOIN kvio_proc p ON p.upid = l.k1
JOIN kvio_cmd_name o ON o.id = l.k2
ORDER BY p.label, op DESC;
