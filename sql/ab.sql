-- ab.sql — paired A/B object diffs. The base arm is :base_label (kvio-report
-- --base), or when it is unset (NULL) the first label in string order. Store/load objects with a key are matched across arms on (key, op)
-- and their order by begin time (the k-th store of a key in one arm with the
-- k-th in the other); delta = other span - base span (ns, negative = other
-- faster), p50 and p95 per (other label, op), and the p50's 95% interval,
-- p-value and verdict (the sign test of the paired deltas):
--   ci_low, ci_high  the l-th and (n+1-l)-th smallest delta, l = kvio_sign_rank(n,
--                    0.95): the distribution-free interval of the deltas' median
--                    (coverage >= 95%, no distribution assumed); NULL when n < 6
--   p_value          kvio_sign_p(#deltas > 0, #deltas < 0): the exact two-sided sign
--                    test (ties dropped) that the median delta is 0
--   rel              delta_p50 / the p50 of the paired base spans
--   verdict          untested (n < 6: no 95% interval), slower (ci_low > 0 and rel >=
--                    2%), faster (ci_high < 0 and rel <= -2%), else 'no change'
--                    (the 2%: the objects of one run are not independent draws, as
--                    kvio-report --compare's within-run test says; docs/report.md)
-- Its samples, the TEMP tables kvio_ab_base (label) and kvio_ab_delta (label,
-- op, d, b: the base span), are what html_ab.sql draws.
-- Inputs: kvio_object (prelude.sql); kvio_pct, kvio_sign_rank, kvio_sign_p (the extension).
DROP TABLE IF EXISTS temp.kvio_ab_base;
DROP TABLE IF EXISTS temp.kvio_ab_delta;
CREATE TEMP TABLE kvio_ab_base AS                  -- the base label
SELECT coalesce(:base_label, min(label)) AS label FROM kvio_object;
CREATE TEMP TABLE kvio_ab_delta AS                 -- (non-base label, op, other - base span, base span; ns)
WITH k AS (
  SELECT label, key, op, dur,
    row_number() OVER (PARTITION BY label, key, op ORDER BY ts, id) AS nth
  FROM kvio_object
  WHERE key IS NOT NULL AND key <> '' AND op IN ('store', 'load')
    AND (SELECT count(DISTINCT label) > 1 FROM kvio_object) -- one arm: nothing to pair (no numbering)
)
SELECT o.label, o.op, o.dur - b.dur AS d, b.dur AS b
FROM k b JOIN kvio_ab_base base ON b.label = base.label
JOIN k o ON o.key = b.key AND o.op = b.op AND o.nth = b.nth AND o.label <> b.label;

WITH s AS (                                        -- per (label, op): signs and the interval's rank
  SELECT label, op, count(*) AS n, sum(d > 0) AS pos, sum(d < 0) AS neg,
    kvio_sign_rank(count(*), 0.95) AS l
  FROM kvio_ab_delta GROUP BY label, op
), r AS (                                          -- the deltas by rank
  SELECT label, op, d, row_number() OVER (PARTITION BY label, op ORDER BY d) AS r FROM kvio_ab_delta
), p AS (
  SELECT d.k1 AS label, d.k2 AS op, d.n, d.p50, d.p95, d.p50 * 1.0 / nullif(b.p50, 0) AS rel, s.pos, s.neg, s.l,
    lo.d AS ci_low, hi.d AS ci_high
  FROM kvio_pct((SELECT kvio_pct_gather(label, op, d) FROM kvio_ab_delta)) d
  JOIN kvio_pct((SELECT kvio_pct_gather(label, op, b) FROM kvio_ab_delta)) b ON b.k1 = d.k1 AND b.k2 = d.k2
  JOIN s ON s.label = d.k1 AND s.op = d.k2
  LEFT JOIN r lo ON lo.label = d.k1 AND lo.op = d.k2 AND lo.r = s.l
  LEFT JOIN r hi ON hi.label = d.k1 AND hi.op = d.k2 AND hi.r = s.n + 1 - s.l
)
SELECT
  label,
  (SELECT label FROM kvio_ab_base) AS vs,         -- base label
  op,                                              -- store | load
  n,                                               -- paired objects
  p50 AS delta_p50,                                -- ns
  p95 AS delta_p95,                                -- ns
  ci_low, ci_high,                                 -- ns; NULL when n < 6
  kvio_sign_p(pos, neg) AS p_value,
  rel,
  CASE WHEN l = 0 THEN 'untested'
       WHEN ci_low > 0 AND rel >= 0.02 THEN 'slower'
       WHEN ci_high < 0 AND rel <= -0.02 THEN 'faster'
       ELSE 'no change' END AS verdict
FROM p
ORDER BY label, op;
