-- html_ab.sql — paired A/B object deltas as CDFs (kvio-report --html). It
-- draws ab.sql's samples (by the non-base label and op: other span - base
-- span of paired objects; the base is :base_label (kvio-report --base), else
-- the first label, as in ab.sql), downsampled to kvio_cdf_grid's quantiles
-- (kvio_quantiles). Left of 0: the other arm was faster.
-- Inputs: kvio_object, kvio_cdf_grid (prelude.sql); kvio_pct_gather, kvio_quantiles (the extension).
WITH k AS (
  SELECT label, key, op, dur,
    row_number() OVER (PARTITION BY label, key, op ORDER BY ts, id) AS nth
  FROM kvio_object
  WHERE key IS NOT NULL AND key <> '' AND op IN ('store', 'load')
), base AS (
  SELECT coalesce(:base_label, min(label)) AS label FROM kvio_object
), delta AS (                                      -- (non-base label, op, other - base span, ns)
  SELECT o.label, o.op, o.dur - b.dur AS d
  FROM k b JOIN base ON b.label = base.label
  JOIN k o ON o.key = b.key AND o.op = b.op AND o.nth = b.nth AND o.label <> b.label
)
SELECT
  'ab:' || q.k2 AS chart,                          -- ab:load | ab:store
  q.k1 AS label,                                   -- the non-base arm
  '− ' || (SELECT coalesce(:base_label, min(label)) FROM kvio_object) AS role, -- '− BASE': the legend says arm − base
  q.v AS x,                                        -- span delta, other - base (ns)
  (q.rank + 1) * 1.0 / q.n AS y                    -- share of the pairs with delta <= x
FROM kvio_quantiles((SELECT kvio_pct_gather(label, op, d) FROM delta), (SELECT grid FROM kvio_cdf_grid)) q
ORDER BY chart, label, role, y;
