-- html_tp_barrier.sql — TP barrier skew as a CDF (kvio-report --html). Run
-- after tp_barrier.sql: it draws that file's samples (kvio_sample group gap:
-- per (op, chunk) seen on every shard, max - min of the object ends), present
-- only for labels with more than one shard; downsampled to kvio_cdf's grid.
-- Inputs: kvio_sample as tp_barrier.sql leaves it, kvio_cdf (prelude.sql).
SELECT
  'tp:gap' AS chart,
  label,                                           -- arm
  '' AS role,
  v AS x,                                          -- all-rank-ready skew of a chunk (ns)
  frac AS y                                        -- share of the chunks with skew <= x
FROM kvio_cdf
ORDER BY chart, label, role, y;
