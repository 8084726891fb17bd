-- html_tp_barrier.sql — TP barrier skew as a CDF (kvio-report --html). It
-- draws tp_barrier.sql's samples (per (op, chunk) seen on every shard, max -
-- min of the object ends), present only for labels with more than one shard;
-- downsampled to kvio_cdf_grid's quantiles (kvio_quantiles).
-- Inputs: kvio_object, kvio_cdf_grid (prelude.sql); kvio_pct_gather, kvio_quantiles (the extension).
WITH ok AS (
  SELECT * FROM kvio_object WHERE error IS NULL OR error = '' OR error = 0
), shards AS (
  SELECT label, count(DISTINCT fmt) AS n FROM ok WHERE fmt IS NOT NULL AND fmt <> '' GROUP BY label
), chunk_end AS (
  SELECT label, op, chunk, count(*) AS n, max(ts + dur) - min(ts + dur) AS gap
  FROM ok
  WHERE chunk IS NOT NULL AND chunk <> '' AND op IN ('store', 'load')
  GROUP BY label, op, chunk
), skew AS (                                       -- (label, all-rank-ready skew of a chunk, ns)
  SELECT c.label, c.gap
  FROM chunk_end c JOIN shards s ON s.label = c.label
  WHERE s.n > 1 AND c.n = s.n
)
SELECT
  'tp:gap' AS chart,
  q.k1 AS label,                                   -- arm
  '' AS role,
  q.v AS x,                                        -- all-rank-ready skew of a chunk (ns)
  (q.rank + 1) * 1.0 / q.n AS y                    -- share of the chunks with skew <= x
FROM kvio_quantiles((SELECT kvio_pct_gather(label, 'gap', gap) FROM skew), (SELECT grid FROM kvio_cdf_grid)) q
ORDER BY chart, label, role, y;
