-- html_qd.sql — achieved queue depth over time, and time at each depth
-- (kvio-report --html). It reads qd.sql's sweep
-- (kvio_qd_ev, kvio_qd_depth, kvio_qd_label): between a label's consecutive
-- events the depth holds, an interval [a, b) at depth d.
--   qd:depth  per depth d, the share of the label's swept span spent at d
--             (the shares sum to 1; those of d <= 1 to qd's pct_time_le1)
--   qd:time   the swept span cut into 400 buckets of w = ceil(span / 400) ns
--             (the last may be shorter): role mean = the time-weighted mean
--             depth in the bucket, role max = the deepest depth of an interval
--             in it (zero-length ones included, as qd's max)
-- Inputs: kvio_pool, kvio_proc (prelude.sql); the sweep tables are built here (qd.sql's
-- operator keeps no rows).

-- The samples it draws, as qd.sql gathered them before its operators (kvio_pct
-- and friends keep no rows): the old statements, kept here for the picture.
-- kvio_qd_ev: the events numbered (pos) in (label, ts, delta) order; each
-- label is one run of positions.
DROP TABLE IF EXISTS temp.kvio_qd_ev;
CREATE TEMP TABLE kvio_qd_ev(pos INTEGER PRIMARY KEY, label INT, ts INT, d INT); -- label: the lid
INSERT INTO kvio_qd_ev(label, ts, d)
SELECT lid, ts, 1 FROM kvio_pool WHERE real
UNION ALL
SELECT lid, ts + dur, -1 FROM kvio_pool WHERE real
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
CREATE TEMP TABLE kvio_qd_label(first INTEGER PRIMARY KEY, last INT, label INT);
INSERT INTO kvio_qd_label
SELECT min(pos), max(pos), label FROM (
  SELECT e.pos, e.label FROM kvio_qd_ev e
  LEFT JOIN kvio_qd_ev p ON p.pos = e.pos - 1
  LEFT JOIN kvio_qd_ev n ON n.pos = e.pos + 1
  WHERE p.pos IS NULL OR p.label IS NOT e.label OR n.pos IS NULL OR n.label IS NOT e.label
) GROUP BY label;

-- kvio_html_qd_iv: one row per interval (event and its label's next event)
DROP TABLE IF EXISTS temp.kvio_html_qd_iv;
CREATE TEMP TABLE kvio_html_qd_iv AS
SELECT l.first, e.ts AS a, n.ts AS b, q.qd
FROM kvio_qd_label l
JOIN kvio_qd_ev e ON e.pos BETWEEN l.first AND l.last - 1
JOIN kvio_qd_ev n ON n.pos = e.pos + 1
JOIN kvio_qd_depth q ON q.pos = e.pos;

-- kvio_html_qd_grid: each label's bucket width w and bucket count nb
DROP TABLE IF EXISTS temp.kvio_html_qd_grid;
CREATE TEMP TABLE kvio_html_qd_grid(first INTEGER PRIMARY KEY, label TEXT, t0 INT, span INT, w INT, nb INT);
INSERT INTO kvio_html_qd_grid
SELECT first, label, t0, span, w, (span + w - 1) / w FROM (
  SELECT l.first, (SELECT label FROM kvio_proc WHERE upid = l.label) AS label, f.ts AS t0, z.ts - f.ts AS span, max(1, (z.ts - f.ts + 399) / 400) AS w
  FROM kvio_qd_label l JOIN kvio_qd_ev f ON f.pos = l.first JOIN kvio_qd_ev z ON z.pos = l.last
) WHERE span > 0;

-- kvio_html_qd_bucket: every bucket of every label, keyed so that an interval
-- finds the buckets it touches by one range lookup
DROP TABLE IF EXISTS temp.kvio_html_qd_bucket;
CREATE TEMP TABLE kvio_html_qd_bucket(first INT, k INT, x INT, width INT, PRIMARY KEY (first, k));
WITH RECURSIVE k(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k < 400)
INSERT INTO kvio_html_qd_bucket
SELECT g.first, k.k, g.t0 + k.k * g.w, min(g.w, g.span - k.k * g.w)
FROM kvio_html_qd_grid g JOIN k ON k.k < g.nb;

-- kvio_html_qd_acc: per bucket, the depth-time of the intervals of depth > 0
-- that touch it (each one's overlap with the bucket) and the deepest of them
DROP TABLE IF EXISTS temp.kvio_html_qd_acc;
CREATE TEMP TABLE kvio_html_qd_acc(first INT, k INT, area INT, max INT, PRIMARY KEY (first, k));
INSERT INTO kvio_html_qd_acc
SELECT b.first, b.k, sum(i.qd * (min(i.b, b.x + g.w) - max(i.a, b.x))), max(i.qd)
FROM kvio_html_qd_iv i                             -- CROSS JOIN: intervals outside, each
CROSS JOIN kvio_html_qd_grid g                     -- finding its few buckets by the key
CROSS JOIN kvio_html_qd_bucket b
WHERE i.qd > 0 AND g.first = i.first AND b.first = i.first
  AND b.k BETWEEN (i.a - g.t0) / g.w AND min(g.nb - 1, (max(i.a, i.b - 1) - g.t0) / g.w)
GROUP BY b.first, b.k;

WITH per_bucket AS (
  SELECT g.label, b.x, coalesce(a.area, 0) * 1.0 / b.width AS mean, coalesce(a.max, 0) AS max
  FROM kvio_html_qd_bucket b JOIN kvio_html_qd_grid g ON g.first = b.first
  LEFT JOIN kvio_html_qd_acc a ON a.first = b.first AND a.k = b.k
)
SELECT 'qd:depth' AS chart, g.label, '' AS role,
  i.qd AS x,                                       -- queue depth
  sum(i.b - i.a) * 1.0 / g.span AS y               -- share of the swept span at that depth
FROM kvio_html_qd_iv i JOIN kvio_html_qd_grid g ON g.first = i.first
GROUP BY g.label, i.qd
UNION ALL
SELECT 'qd:time', label, 'mean',
  x,                                               -- bucket start (ns since the capture's t = 0)
  mean                                             -- time-weighted mean depth in the bucket
FROM per_bucket
UNION ALL
SELECT 'qd:time', label, 'max', x, max FROM per_bucket -- deepest depth in the bucket
ORDER BY chart, label, role, x;
