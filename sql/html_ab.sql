-- html_ab.sql — paired A/B object deltas as CDFs (kvio-report --html). It
-- draws ab.sql's samples (by the non-base label and op: other span - base
-- span of paired objects; the base is :base_label (kvio-report --base), else
-- the first label, as in ab.sql), downsampled to kvio_cdf_grid's quantiles
-- (kvio_quantiles). Left of 0: the other arm was faster.
-- Inputs: kvio_ab_base, kvio_ab_delta (ab.sql, run before it), kvio_cdf_grid (prelude.sql);
-- kvio_pct_gather, kvio_quantiles (the extension).
SELECT
  'ab:' || q.k2 AS chart,                          -- ab:load | ab:store
  q.k1 AS label,                                   -- the non-base arm
  '− ' || (SELECT label FROM kvio_ab_base) AS role, -- '− BASE': the legend says arm − base
  q.v AS x,                                        -- span delta, other - base (ns)
  (q.rank + 1) * 1.0 / q.n AS y                    -- share of the pairs with delta <= x
FROM kvio_quantiles((SELECT kvio_pct_gather(label, op, d) FROM kvio_ab_delta), (SELECT grid FROM kvio_cdf_grid)) q
ORDER BY chart, label, role, y;
