-- html_tp_barrier.sql — TP barrier skew as a CDF (kvio-report --html). It
-- draws tp_barrier.sql's samples (per (op, chunk) seen on every shard, max -
-- min of the object ends), present only for labels with more than one shard;
-- downsampled to kvio_cdf_grid's quantiles (kvio_quantiles).
-- Inputs: kvio_tp_gap, kvio_cdf_grid (prelude.sql);
-- kvio_pct_gather, kvio_quantiles (the extension).
SELECT
  'tp:gap' AS chart,
  q.k1 AS label,                                   -- arm
  '' AS role,
  q.v AS x,                                        -- all-rank-ready skew of a chunk (ns)
  (q.rank + 1) * 1.0 / q.n AS y                    -- share of the chunks with skew <= x
FROM kvio_quantiles((SELECT kvio_pct_gather(label, 'gap', gap) FROM kvio_tp_gap), (SELECT grid FROM kvio_cdf_grid)) q
ORDER BY chart, label, role, y;
