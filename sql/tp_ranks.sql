-- tp_ranks.sql — the TP all-rank-ready barrier by decoded shard identity.
-- kvio decodes the rank at ingest from whichever LMCache key form the object
-- has (args tp_rank, tp_world, tp_chunk): fmt@model@world_size@worker_id@chunk,
-- legacy model@world_size@worker_id@chunkhex@dtype, or the MP ObjectKey
-- model@0xKVRANK[@group]@chunkhex (world_size<<24 | global_rank<<16 | ...).
-- Per (op, tp_chunk) over store/load objects without error: max - min of the
-- object ends (ns), for chunks seen on every rank of the label's world size.
-- Inputs: kvio_object (prelude.sql); kvio_pct (the extension).
WITH ok AS (
  SELECT * FROM kvio_object
  WHERE (error IS NULL OR error = '' OR error = 0) AND tp_rank IS NOT NULL AND op IN ('store', 'load')
), world AS (
  SELECT label, max(tp_world) AS ws, count(DISTINCT tp_rank) AS ranks FROM ok GROUP BY label
), chunk_end AS (
  SELECT label, op, tp_chunk, count(DISTINCT tp_rank) AS r, max(ts + dur) - min(ts + dur) AS gap
  FROM ok GROUP BY label, op, tp_chunk
), gap AS (
  SELECT c.label, c.gap
  FROM chunk_end c JOIN world w ON w.label = c.label
  WHERE w.ranks > 1 AND c.r = w.ranks
)
SELECT
  p.label,
  (SELECT max(tp_world) FROM kvio_object o WHERE o.label = p.label) AS world_size,
  (SELECT count(DISTINCT tp_rank) FROM kvio_object o WHERE o.label = p.label AND tp_rank IS NOT NULL
     AND (error IS NULL OR error = '' OR error = 0) AND op IN ('store', 'load')) AS ranks,
  p.p50 AS gap_p50,                                -- ns
  p.p99 AS gap_p99,                                -- ns
  p.n AS chunks                                    -- (op, chunk) groups seen on every rank
FROM (SELECT k1 AS label, * FROM kvio_pct((SELECT kvio_pct_gather(label, 'gap', gap) FROM gap))) p
ORDER BY p.label;
