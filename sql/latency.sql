-- latency.sql — per-command device latency percentiles per label and op.
-- Over the pool's commands whose duration is real (completion - submit, from
-- the tracer's nvme_uring_cmd_end_io probe); ops read and write only.
-- Inputs: kvio_pool, kvio_sample, kvio_pct (prelude.sql).
DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
SELECT label, op, dur FROM kvio_pool WHERE real AND op IN ('read', 'write')
ORDER BY 1, 2, 3;
SELECT
  label,
  grp AS op,                                       -- read | write
  n,                                               -- commands with a real duration
  p50, p95, p99, max                               -- latency (ns)
FROM kvio_pct
ORDER BY label, op DESC;
