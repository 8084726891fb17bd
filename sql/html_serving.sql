-- html_serving.sql — serving-layer span CDFs per op, e.g. TTFT (kvio-report
-- --html). Run after serving.sql: it draws that file's samples (kvio_sample
-- grouped by label and op), downsampled to kvio_cdf's grid.
-- Inputs: kvio_sample as serving.sql leaves it, kvio_cdf (prelude.sql).
SELECT
  'serving:' || grp AS chart,                      -- serving:<op>
  label,                                           -- arm
  '' AS role,
  v AS x,                                          -- span (ns)
  frac AS y                                        -- share of the spans <= x
FROM kvio_cdf
ORDER BY chart, label, role, y;
