-- html_ab.sql — paired A/B object deltas as CDFs (kvio-report --html). Run
-- after ab.sql: it draws that file's samples (kvio_sample grouped by the
-- non-base label and op: other span - base span of paired objects),
-- downsampled to kvio_cdf's grid. Left of 0: the other arm was faster.
-- Inputs: kvio_sample as ab.sql leaves it, kvio_cdf (prelude.sql).
SELECT
  'ab:' || grp AS chart,                           -- ab:load | ab:store
  label,                                           -- the non-base arm
  '' AS role,
  v AS x,                                          -- span delta, other - base (ns)
  frac AS y                                        -- share of the pairs with delta <= x
FROM kvio_cdf
ORDER BY chart, label, role, y;
