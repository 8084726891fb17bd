-- html_qd.sql — achieved queue depth over time, and time at each depth
-- (kvio-report --html), over qd.sql's sweep (the pool's commands with real
-- durations: +1 at submit, -1 at completion, a completion first at the same ns;
-- between a label's consecutive events the depth holds, an interval [a, b)):
--   qd:depth  per depth d, the share of the label's swept span spent at d
--             (kvio_depth; the shares sum to 1, those of d <= 1 to qd's pct_time_le1)
--   qd:time   the swept span cut into 400 buckets of w = ceil(span / 400) ns
--             (the last may be shorter; kvio_depth_buckets): role mean = the
--             time-weighted mean depth in the bucket, role max = the deepest
--             depth of an interval in it (zero-length ones included)
-- Inputs: kvio_pool_batches, kvio_pool_ordered_batches, kvio_proc (prelude.sql); kvio_groups,
-- kvio_depth, kvio_depth_buckets (the extension).

-- kvio_html_qd_grid: each label's swept span [t0, t0 + span) and bucket width w
DROP TABLE IF EXISTS temp.kvio_html_qd_grid;
CREATE TEMP TABLE kvio_html_qd_grid(lid INTEGER PRIMARY KEY, label TEXT, t0 INT, span INT, w INT);
INSERT INTO kvio_html_qd_grid
SELECT lid, (SELECT label FROM kvio_proc WHERE upid = lid), t0, t1 - t0, max(1, (t1 - t0 + 399) / 400)
FROM (SELECT k1 AS lid, max(CASE col WHEN 1 THEN min END) AS t0, max(CASE col WHEN 2 THEN max END) AS t1
      FROM kvio_groups((SELECT kvio_group_gather(lid, NULL, ts, ts_end) FROM kvio_pool_batches WHERE real = 1))
      GROUP BY k1)
WHERE t1 > t0;

WITH depth AS (                                    -- (lid, depth, ns at that depth)
  SELECT k AS lid, depth, time
  FROM kvio_depth((SELECT kvio_depth_gather(lid, ts, dur) FROM kvio_pool_ordered_batches WHERE real = 1))
), bucket AS (                                     -- (lid, bucket start, width, depth x ns, deepest)
  SELECT b.k AS lid, b.start, b.width, b.area, b.max -- each label's grid, over that label's commands
  FROM kvio_html_qd_grid g, kvio_depth_buckets((SELECT kvio_depth_buckets_gather(lid, ts, dur, g.t0, g.w)
                                                FROM kvio_pool_ordered_batches WHERE real = 1 AND lid = g.lid)) b
)
SELECT 'qd:depth' AS chart, g.label, '' AS role,
  d.depth AS x,                                    -- queue depth
  d.time * 1.0 / g.span AS y                       -- share of the swept span at that depth
FROM depth d JOIN kvio_html_qd_grid g ON g.lid = d.lid
UNION ALL
SELECT 'qd:time', g.label, 'mean',
  b.start,                                         -- bucket start (ns since the capture's t = 0)
  b.area * 1.0 / b.width                           -- time-weighted mean depth in the bucket
FROM bucket b JOIN kvio_html_qd_grid g ON g.lid = b.lid
UNION ALL
SELECT 'qd:time', g.label, 'max', b.start, b.max   -- deepest depth in the bucket
FROM bucket b JOIN kvio_html_qd_grid g ON g.lid = b.lid
ORDER BY chart, label, role, x;
