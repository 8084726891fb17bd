-- html_commands.sql — throughput over time (kvio-report --html). Each label's
-- wall span (commands.sql's wall_ns: first submit to last end, all commands)
-- cut into 400 buckets of w = ceil(wall_ns / 400) ns (the last may be
-- shorter); the pool's commands counted in the bucket of their submit:
--   tput:mbs   data_len per bucket / bucket length, MB/s (10^6 B/s); their
--              mean, weighted by bucket length, is commands.sql's throughput
--   tput:cmds  commands submitted per ms of the bucket
-- Empty buckets are listed as 0. Runs after prelude.sql alone (commands.sql
-- leaves nothing behind).
-- Both passes over the commands group by hashing (kvio_group_gather: a GROUP BY
-- on the bucket sorted every command).
-- Inputs: kvio_command_batches, kvio_pool (prelude.sql); kvio_group_gather (the extension).
WITH RECURSIVE k(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k < 400),
grid AS (                                          -- each label's wall span and bucket width
  SELECT label, t0, span, w, (span + w - 1) / w AS nb FROM (
    SELECT label, t0, t1 - t0 AS span, max(1, (t1 - t0 + 399) / 400) AS w FROM (
      SELECT k1 AS label, max(CASE col WHEN 1 THEN min END) AS t0, -- first submit
        max(CASE col WHEN 2 THEN max END) AS t1                    -- last end
      FROM kvio_groups((SELECT kvio_group_gather(lid, NULL, ts, ts_end) FROM kvio_command_batches)) GROUP BY k1)
  ) WHERE span > 0
), bucket AS (
  SELECT g.label, g.t0, g.w, k.k, min(g.w, g.span - k.k * g.w) AS width
  FROM grid g JOIN k ON k.k < g.nb
), sub AS (                                        -- the pool's submits and bytes per bucket (hashed)
  SELECT k1 AS label, k2 AS k, n, coalesce(sum, 0) AS bytes
  FROM kvio_groups((SELECT kvio_group_gather(p.lid, min(g.nb - 1, (p.ts - g.t0) / g.w), p.dlen)
                    FROM kvio_pool p JOIN grid g ON g.label = p.lid))
), per_bucket AS (
  SELECT (SELECT label FROM kvio_proc WHERE upid = b.label) AS label, b.t0 + b.k * b.w AS x, coalesce(s.n, 0) AS n, coalesce(s.bytes, 0) AS bytes, b.width
  FROM bucket b LEFT JOIN sub s ON s.label = b.label AND s.k = b.k
)
SELECT 'tput:mbs' AS chart, label, '' AS role,
  x,                                               -- bucket start (ns since the capture's t = 0)
  bytes * 1000.0 / width AS y                      -- MB/s (bytes/ns * 1000)
FROM per_bucket
UNION ALL
SELECT 'tput:cmds', label, '', x,
  n * 1e6 / width                                  -- commands per ms
FROM per_bucket
ORDER BY chart, label, role, x;
