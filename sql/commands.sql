-- commands.sql — NVMe command counts, bytes, wall time and throughput per label.
-- Inputs: kvio_command_batches, kvio_pool_all, kvio_proc (prelude.sql); kvio_groups (the extension).
WITH g AS (                                        -- one hashed pass: per (lid, tagged 0 | 1) and value
  SELECT k1 AS lid, k2 AS is_tagged, col, n, min, max, sum
  FROM kvio_groups((SELECT kvio_group_gather(lid, tagged, dlen, ts, ts_end, real) FROM kvio_command_batches))
), c AS (                                          -- per label (col: 1 dlen, 2 ts, 3 ts_end = ts + dur, 4 real)
  SELECT
    lid,
    sum(n) FILTER (WHERE col = 1) AS n,            -- commands
    coalesce(sum(n) FILTER (WHERE col = 1 AND is_tagged), 0) AS tagged,
    sum(sum) FILTER (WHERE col = 1) AS bytes_all,
    sum(sum) FILTER (WHERE col = 1 AND is_tagged) AS bytes_tagged,
    min(min) FILTER (WHERE col = 2) AS t0,
    max(max) FILTER (WHERE col = 3) AS t1,
    sum(sum) FILTER (WHERE col = 4) AS n_real
  FROM g
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
