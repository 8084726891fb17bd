-- qd.sql — achieved queue depth over time per label.
-- Sweep over the pool's commands with real durations: +1 at submit, -1 at
-- completion, events in (ts, delta) order (a completion before a submit at the
-- same ns). Between consecutive events the depth is the running sum.
--   mean          time-weighted mean depth over the swept span
--   max           deepest queue
--   pct_time_le1  share of the swept span with depth <= 1
-- The span runs from the first submit to the last completion (idle included).
-- Inputs: kvio_pool (prelude.sql).

-- kvio_qd_ev: the events numbered (pos) in (label, ts, delta) order; each
-- label is one run of positions.
DROP TABLE IF EXISTS temp.kvio_qd_ev;
CREATE TEMP TABLE kvio_qd_ev(pos INTEGER PRIMARY KEY, label TEXT, ts INT, d INT);
INSERT INTO kvio_qd_ev(label, ts, d)
SELECT label, ts, 1 FROM kvio_pool WHERE real
UNION ALL
SELECT label, ts + dur, -1 FROM kvio_pool WHERE real
ORDER BY 1, 2, 3;

-- kvio_qd_depth: the depth after each event. Every label's deltas sum to 0,
-- so one running sum over pos restarts at 0 with each label (no PARTITION BY:
-- the window runs once, over rowid order).
DROP TABLE IF EXISTS temp.kvio_qd_depth;
CREATE TEMP TABLE kvio_qd_depth(pos INTEGER PRIMARY KEY, qd INT);
INSERT INTO kvio_qd_depth
SELECT pos, sum(d) OVER (ORDER BY pos ROWS UNBOUNDED PRECEDING) FROM kvio_qd_ev;

-- kvio_qd_label: each label's run of positions [first, last], found from the
-- rows whose neighbour belongs to another label (a scan, no sort)
DROP TABLE IF EXISTS temp.kvio_qd_label;
CREATE TEMP TABLE kvio_qd_label(first INTEGER PRIMARY KEY, last INT, label TEXT);
INSERT INTO kvio_qd_label
SELECT min(pos), max(pos), label FROM (
  SELECT e.pos, e.label FROM kvio_qd_ev e
  LEFT JOIN kvio_qd_ev p ON p.pos = e.pos - 1
  LEFT JOIN kvio_qd_ev n ON n.pos = e.pos + 1
  WHERE p.pos IS NULL OR p.label IS NOT e.label OR n.pos IS NULL OR n.label IS NOT e.label
) GROUP BY label;

-- per label: each event's depth holds until the label's next event (dt); the
-- swept span is last ts - first ts (events are in ts order within a label)
SELECT label, mean, max, pct_time_le1 FROM (
  SELECT
    l.label,
    sum(q.qd * coalesce(n.ts - e.ts, 0)) * 1.0 / (max(e.ts) - min(e.ts)) AS mean,
    max(q.qd) AS max,
    sum(CASE WHEN q.qd <= 1 THEN coalesce(n.ts - e.ts, 0) ELSE 0 END) * 1.0
      / (max(e.ts) - min(e.ts)) AS pct_time_le1,
    max(e.ts) - min(e.ts) AS span
  FROM kvio_qd_label l
  JOIN kvio_qd_ev e ON e.pos BETWEEN l.first AND l.last
  JOIN kvio_qd_depth q ON q.pos = e.pos
  LEFT JOIN kvio_qd_ev n ON n.pos = e.pos + 1 AND e.pos < l.last
  GROUP BY l.first                                 -- the scan's own order: no sort
)
WHERE span > 0
ORDER BY label;
