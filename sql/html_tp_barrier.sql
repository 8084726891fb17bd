-- html_tp_barrier.sql — TP barrier skew as a CDF (kvio-report --html). It
-- draws tp_barrier.sql's samples (kvio_sample group gap:
-- per (op, chunk) seen on every shard, max - min of the object ends), present
-- only for labels with more than one shard; downsampled to kvio_cdf's grid.
-- Inputs: prelude.sql's tables and views (the samples tp_barrier.sql's operators take are
-- gathered here row by row, the old way: the operators keep none), kvio_cdf (prelude.sql).

-- The samples it draws, as tp_barrier.sql gathered them before its operators (kvio_pct
-- and friends keep no rows): the old statements, kept here for the picture.
DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
WITH ok AS (
  SELECT * FROM kvio_object WHERE error IS NULL OR error = '' OR error = 0
), shards AS (
  SELECT label, count(DISTINCT fmt) AS n FROM ok WHERE fmt IS NOT NULL AND fmt <> '' GROUP BY label
), chunk_end AS (
  SELECT label, op, chunk, count(*) AS n, max(ts + dur) - min(ts + dur) AS gap
  FROM ok
  WHERE chunk IS NOT NULL AND chunk <> '' AND op IN ('store', 'load')
  GROUP BY label, op, chunk
)
SELECT c.label, 'gap', c.gap
FROM chunk_end c JOIN shards s ON s.label = c.label
WHERE s.n > 1 AND c.n = s.n
ORDER BY 1, 2, 3;

SELECT
  'tp:gap' AS chart,
  label,                                           -- arm
  '' AS role,
  v AS x,                                          -- all-rank-ready skew of a chunk (ns)
  frac AS y                                        -- share of the chunks with skew <= x
FROM kvio_cdf
ORDER BY chart, label, role, y;
