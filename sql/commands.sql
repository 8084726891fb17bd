-- commands.sql — NVMe command counts, bytes, wall time and throughput per label.
-- Inputs: kvio_command, kvio_pool_all, kvio_proc (prelude.sql).
WITH c AS (                                        -- one pass, in kvio_cmd's (lid) order
  SELECT
    lid,
    count(*) AS n,                                   -- commands
    sum(tagged) AS tagged,
    sum(dlen) AS bytes_all,
    sum(CASE WHEN tagged THEN dlen END) AS bytes_tagged,
    min(ts) AS t0,
    max(ts + dur) AS t1,
    sum(real) AS n_real
  FROM kvio_command
  GROUP BY lid
), b AS (
  SELECT c.*,
    coalesce(CASE WHEN lid IN (SELECT lid FROM kvio_pool_all) THEN bytes_all ELSE bytes_tagged END, 0) AS pool_bytes
  FROM c
)
SELECT
  p.label,
  b.n,                                             -- commands
  b.tagged,                                        -- commands with trace_id != 0
  b.n - b.tagged AS untagged,                      -- commands with trace_id 0
  b.pool_bytes AS tagged_bytes,                    -- sum of data_len over the pool (bytes)
  b.t1 - b.t0 AS wall_ns,                          -- last end - first submit, all commands (ns)
  b.n_real * 1.0 / max(1, b.n) AS real_cover,      -- share of commands with a real duration
  CASE WHEN b.t1 > b.t0 THEN b.pool_bytes * 1.0 / (b.t1 - b.t0) END AS throughput_gbs
                                                   -- tagged_bytes / wall_ns (bytes/ns = GB/s)
FROM b JOIN kvio_proc p ON p.upid = b.lid
ORDER BY p.label;
