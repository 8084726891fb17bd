-- html_commands.sql — throughput over time (kvio-report --html). Each label's
-- wall span (commands.sql's wall_ns: first submit to last end, all commands)
-- cut into 400 buckets of w = ceil(wall_ns / 400) ns (the last may be
-- shorter); the pool's commands counted in the bucket of their submit:
--   tput:mbs   data_len per bucket / bucket length, MB/s (10^6 B/s); their
--              mean, weighted by bucket length, is commands.sql's throughput
--   tput:cmds  commands submitted per ms of the bucket
-- Empty buckets are listed as 0. Runs after prelude.sql alone (commands.sql
-- leaves nothing behind).
-- Inputs: kvio_command, kvio_pool (prelude.sql).
WITH RECURSIVE k(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k < 400),
grid AS (                                          -- each label's wall span and bucket width
  SELECT label, t0, span, w, (span + w - 1) / w AS nb FROM (
    SELECT lid AS label, min(ts) AS t0, max(ts + dur) - min(ts) AS span, max(1, (max(ts + dur) - min(ts) + 399) / 400) AS w
    FROM kvio_command GROUP BY lid
  ) WHERE span > 0
), bucket AS (
  SELECT g.label, g.t0, g.w, k.k, min(g.w, g.span - k.k * g.w) AS width
  FROM grid g JOIN k ON k.k < g.nb
), sub AS (                                        -- the pool's submits and bytes per bucket
  SELECT p.lid AS label, min(g.nb - 1, (p.ts - g.t0) / g.w) AS k, count(*) AS n, coalesce(sum(p.dlen), 0) AS bytes
  FROM kvio_pool p JOIN grid g ON g.label = p.lid
  GROUP BY p.lid, 2
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
