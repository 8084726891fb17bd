-- html_ab.sql — paired A/B object deltas as CDFs (kvio-report --html). It
-- draws ab.sql's samples (kvio_sample grouped by the
-- non-base label and op: other span - base span of paired objects; the base
-- is :base_label (kvio-report --base), else the first label, as in ab.sql),
-- downsampled to kvio_cdf's grid. Left of 0: the other arm was faster.
-- Inputs: prelude.sql's tables and views (the samples ab.sql's operators take are
-- gathered here row by row, the old way: the operators keep none), kvio_cdf (prelude.sql).

-- The samples it draws, as ab.sql gathered them before its operators (kvio_pct
-- and friends keep no rows): the old statements, kept here for the picture.
DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
WITH k AS (
  SELECT label, key, op, dur,
    row_number() OVER (PARTITION BY label, key, op ORDER BY ts, id) AS nth
  FROM kvio_object
  WHERE key IS NOT NULL AND key <> '' AND op IN ('store', 'load')
), base AS (
  SELECT coalesce(:base_label, min(label)) AS label FROM kvio_object
)
SELECT o.label, o.op, o.dur - b.dur
FROM k b JOIN base ON b.label = base.label
JOIN k o ON o.key = b.key AND o.op = b.op AND o.nth = b.nth AND o.label <> b.label
ORDER BY 1, 2, 3;

SELECT
  'ab:' || grp AS chart,                           -- ab:load | ab:store
  label,                                           -- the non-base arm
  '− ' || (SELECT coalesce(:base_label, min(label)) FROM kvio_object) AS role, -- '− BASE': the legend says arm − base
  v AS x,                                          -- span delta, other - base (ns)
  frac AS y                                        -- share of the pairs with delta <= x
FROM kvio_cdf
ORDER BY chart, label, role, y;
