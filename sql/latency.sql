-- latency.sql — per-command device latency percentiles per label and op.
-- Over the pool's commands whose duration is real (completion - submit, from
-- the tracer's nvme_uring_cmd_end_io probe); ops read and write only: the
-- gather is prelude.sql's kvio_latency (the QD1 service time reads it too).
-- Inputs: kvio_latency, kvio_filled, kvio_proc (prelude.sql), kvio_cmd_name; kvio_pct (the extension).
INSERT INTO kvio_latency SELECT * FROM kvio_latency_fill;
INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_latency');

SELECT
  p.label,
  o.name AS op,                                    -- read | write
  l.n,                                             -- commands with a real duration
  l.p50, l.p95, l.p99, l.max                       -- latency (ns)
FROM kvio_latency l
JOIN kvio_proc p ON p.upid = l.lid
JOIN kvio_cmd_name o ON o.id = l.op_id
ORDER BY p.label, op DESC;
