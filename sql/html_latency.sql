-- html_latency.sql — the page's per-command latency CDFs (kvio-report --html).
-- It draws latency.sql's samples (the real durations of the pool's reads and
-- writes, by label and op), so the curve passes through the p50/p95/p99 the
-- report prints. Each (label, op) is downsampled to the grid quantiles of
-- kvio_cdf_grid (at most 211 points).
-- Every html_*.sql returns the same columns: one row per point of a chart's
-- series, in drawing order.
-- Inputs: kvio_pool_batches, kvio_proc, kvio_cdf_grid (prelude.sql); kvio_quantiles (the extension).
SELECT
  'lat:' || c.k2 AS chart,                         -- lat:read | lat:write
  p.label,                                         -- arm: one series per label
  '' AS role,                                      -- series role within the arm (none here)
  c.v AS x,                                        -- command latency (ns)
  (c.rank + 1) * 1.0 / c.n AS y                    -- share of the commands with latency <= x
FROM kvio_quantiles((SELECT kvio_pct_gather(lid, op, dur) FROM kvio_pool_batches WHERE real = 1 AND op IN ('read', 'write')),
                    (SELECT grid FROM kvio_cdf_grid)) c
JOIN kvio_proc p ON p.upid = c.k1
ORDER BY chart, label, role, y;
