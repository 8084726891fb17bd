-- qd.sql — achieved queue depth over time per label.
-- Sweep over the pool's commands with real durations: +1 at submit, -1 at
-- completion (a completion before a submit at the same ns); between
-- consecutive events the depth is the running sum. kvio_depth gives the time
-- spent at each depth (docs/database.md), so:
--   mean          time-weighted mean depth over the swept span
--   max           deepest queue
--   pct_time_le1  share of the swept span with depth <= 1 (kvio_rule's qd_low; findings.sql's
--                 QD<=1 spans are the same depths)
-- The span runs from the first submit to the last completion (idle included).
-- The sweep is prelude.sql's kvio_qd (findings.sql reads its low spans).
-- Inputs: kvio_qd, kvio_filled, kvio_proc, kvio_rule (prelude.sql).
INSERT INTO kvio_qd SELECT * FROM kvio_qd_fill;
INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_qd');

WITH depth AS (                                    -- (lid, depth, ns at that depth)
  SELECT lid, depth, time FROM kvio_qd WHERE depth IS NOT NULL
)
SELECT
  p.label,
  sum(d.depth * d.time) * 1.0 / sum(d.time) AS mean,
  max(d.depth) AS max,
  sum(CASE WHEN d.depth <= (SELECT qd_low FROM kvio_rule) THEN d.time ELSE 0 END) * 1.0 / sum(d.time) AS pct_time_le1
FROM depth d JOIN kvio_proc p ON p.upid = d.lid
GROUP BY d.lid
ORDER BY p.label;
