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
-- Inputs: kvio_pool, kvio_proc (prelude.sql); kvio_depth, kvio_depth_buckets (the extension).

-- kvio_html_qd_grid: each label's swept span [t0, t0 + span) and bucket width w
DROP TABLE IF EXISTS temp.kvio_html_qd_grid;
CREATE TEMP TABLE kvio_html_qd_grid(lid INTEGER PRIMARY KEY, label TEXT, t0 INT, span INT, w INT);
INSERT INTO kvio_html_qd_grid
SELECT lid, (SELECT label FROM kvio_proc WHERE upid = lid), t0, t1 - t0, max(1, (t1 - t0 + 399) / 400)
FROM (SELECT lid, min(ts) AS t0, max(ts + dur) AS t1 FROM kvio_pool WHERE real = 1 GROUP BY lid)
WHERE t1 > t0;

WITH depth AS (                                    -- (lid, depth, ns at that depth)
  SELECT k AS lid, depth, time
  FROM kvio_depth((SELECT kvio_depth_gather(lid, ts, dur)
                   FROM (SELECT lid, ts, dur FROM kvio_pool WHERE real = 1 ORDER BY lid, ts)))
), bucket AS (                                     -- (lid, bucket start, width, depth x ns, deepest)
  SELECT k AS lid, start, width, area, max
  FROM kvio_depth_buckets((SELECT kvio_depth_buckets_gather(p.lid, p.ts, p.dur, g.t0, g.w)
                           FROM (SELECT lid, ts, dur FROM kvio_pool WHERE real = 1 ORDER BY lid, ts) p
                           CROSS JOIN kvio_html_qd_grid g ON g.lid = p.lid))
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
