-- tp_barrier.sql — TP all-rank-ready barrier, grouped by the key's fmt field
-- (the reference's heuristic: on MP-server captures the shard identity is the
-- key's second field). When a label's objects have more than one distinct fmt
-- (= shards): per (op, chunk) over store/load objects without error, the
-- spread of object ends, max - min (ns); only chunks seen on every shard.
-- Its samples are the view kvio_tp_gap (prelude.sql), which html_tp_barrier.sql
-- draws and findings.sql's TP barrier findings (skew above the p95) read.
-- Inputs: kvio_tp_gap (prelude.sql); kvio_pct (the extension).
SELECT
  p.label,
  (SELECT max(shards) FROM kvio_tp_gap g WHERE g.label = p.label) AS shards,
  p.p50 AS gap_p50,                                -- ns
  p.p99 AS gap_p99,                                -- ns
  p.n AS chunks                                    -- (op, chunk) groups seen on every shard
FROM (SELECT k1 AS label, * FROM kvio_pct((SELECT kvio_pct_gather(label, 'gap', gap) FROM kvio_tp_gap))) p
ORDER BY p.label;
