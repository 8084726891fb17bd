-- tp_barrier.sql — TP all-rank-ready barrier, grouped by the key's fmt field
-- (the reference's heuristic: on MP-server captures the shard identity is the
-- key's second field). When a label's objects have more than one distinct fmt
-- (= shards): per (op, chunk) over store/load objects without error, the
-- spread of object ends, max - min (ns); only chunks seen on every shard.
-- Its samples, the view kvio_tp_gap (label, gap), are what html_tp_barrier.sql draws.
-- Inputs: kvio_object (prelude.sql); kvio_pct (the extension).
DROP VIEW IF EXISTS temp.kvio_tp_gap;
CREATE TEMP VIEW kvio_tp_gap AS                    -- (label, spread of a chunk's object ends, ns)
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
SELECT c.label, c.gap
FROM chunk_end c JOIN shards s ON s.label = c.label
WHERE s.n > 1 AND c.n = s.n;

SELECT
  p.label,
  (SELECT count(DISTINCT fmt) FROM kvio_object o WHERE o.label = p.label AND fmt IS NOT NULL AND fmt <> ''
     AND (error IS NULL OR error = '' OR error = 0)) AS shards,
  p.p50 AS gap_p50,                                -- ns
  p.p99 AS gap_p99,                                -- ns
  p.n AS chunks                                    -- (op, chunk) groups seen on every shard
FROM (SELECT k1 AS label, * FROM kvio_pct((SELECT kvio_pct_gather(label, 'gap', gap) FROM kvio_tp_gap))) p
ORDER BY p.label;
