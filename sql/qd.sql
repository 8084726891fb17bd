-- qd.sql — achieved queue depth over time per label.
-- Sweep over the pool's commands with real durations: +1 at submit, -1 at
-- completion, events in (ts, delta) order (a completion before a submit at the
-- same ns). Between consecutive events the depth is the running sum.
--   mean          time-weighted mean depth over the swept span
--   max           deepest queue
--   pct_time_le1  share of the swept span with depth <= 1
-- The span runs from the first submit to the last completion (idle included).
-- Inputs: kvio_pool (prelude.sql).
WITH ev AS (
  SELECT label, ts, 1 AS d FROM kvio_pool WHERE real
  UNION ALL
  SELECT label, ts + dur, -1 FROM kvio_pool WHERE real
), depth AS (
  SELECT label, ts,
    sum(d) OVER w AS qd,                             -- depth after this event
    lead(ts) OVER w - ts AS dt                       -- time until the next event (ns)
  FROM ev
  WINDOW w AS (PARTITION BY label ORDER BY ts, d ROWS UNBOUNDED PRECEDING)
)
SELECT
  label,
  sum(qd * coalesce(dt, 0)) * 1.0 / sum(coalesce(dt, 0)) AS mean,
  max(qd) AS max,
  sum(CASE WHEN qd <= 1 THEN coalesce(dt, 0) ELSE 0 END) * 1.0 / sum(coalesce(dt, 0)) AS pct_time_le1
FROM depth
GROUP BY label
HAVING sum(coalesce(dt, 0)) > 0
ORDER BY label;
