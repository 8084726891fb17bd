-- qd.sql — achieved queue depth over time per label.
-- Sweep over the pool's commands with real durations: +1 at submit, -1 at
-- completion, events in (ts, delta) order (a completion before a submit at the
-- same ns). Between consecutive events the depth is the running sum.
--   mean          time-weighted mean depth over the swept span
--   max           deepest queue
--   pct_time_le1  share of the swept span with depth <= 1
-- The span runs from the first submit to the last completion (idle included).
-- Inputs: kvio_pool (prelude.sql).

-- kvio_qd_ev: the events numbered (pos) in (label, ts, delta) order. Every
-- label's deltas sum to 0, so one running sum over pos restarts at 0 with
-- each label (no PARTITION BY: the window runs once, over rowid order), and
-- the next event of a label is pos + 1.
DROP TABLE IF EXISTS temp.kvio_qd_ev;
CREATE TEMP TABLE kvio_qd_ev(pos INTEGER PRIMARY KEY, label TEXT, ts INT, d INT);
INSERT INTO kvio_qd_ev(label, ts, d)
SELECT label, ts, 1 FROM kvio_pool WHERE real
UNION ALL
SELECT label, ts + dur, -1 FROM kvio_pool WHERE real
ORDER BY 1, 2, 3;
WITH depth AS (
  SELECT pos, label, ts,
    sum(d) OVER (ORDER BY pos ROWS UNBOUNDED PRECEDING) AS qd   -- depth after this event
  FROM kvio_qd_ev
), step AS (
  SELECT q.label, q.qd,
    n.ts - q.ts AS dt                                -- time until the label's next event (ns)
  FROM depth q LEFT JOIN kvio_qd_ev n ON n.pos = q.pos + 1 AND n.label = q.label
)
SELECT
  label,
  sum(qd * coalesce(dt, 0)) * 1.0 / sum(coalesce(dt, 0)) AS mean,
  max(qd) AS max,
  sum(CASE WHEN qd <= 1 THEN coalesce(dt, 0) ELSE 0 END) * 1.0 / sum(coalesce(dt, 0)) AS pct_time_le1
FROM step
GROUP BY label
HAVING sum(coalesce(dt, 0)) > 0
ORDER BY label;
