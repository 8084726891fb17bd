-- html_latency.sql — the page's per-command latency CDFs (kvio-report --html).
-- It draws latency.sql's samples (the real durations of
-- the pool's reads and writes, kvio_sample grouped by label and op), so the
-- curve passes through the p50/p95/p99 the report prints. Each (label, op) is
-- downsampled to kvio_cdf's grid quantiles (at most 211 points).
-- Every html_*.sql returns the same columns: one row per point of a chart's
-- series, in drawing order.
-- Inputs: prelude.sql's tables and views (the samples latency.sql's operators take are
-- gathered here row by row, the old way: the operators keep none), kvio_cdf (prelude.sql).

-- The samples it draws, as latency.sql gathered them before its operators (kvio_pct
-- and friends keep no rows): the old statements, kept here for the picture.
DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
SELECT lid, op, dur FROM kvio_pool WHERE real AND op IN ('read', 'write')
ORDER BY 1, 2, 3;

SELECT
  'lat:' || grp AS chart,                          -- lat:read | lat:write
  (SELECT label FROM kvio_proc WHERE upid = c.label) AS label, -- arm: one series per label (kvio_sample holds its lid)
  '' AS role,                                      -- series role within the arm (none here)
  v AS x,                                          -- command latency (ns)
  frac AS y                                        -- share of the commands with latency <= x
FROM kvio_cdf c
ORDER BY chart, label, role, y;
