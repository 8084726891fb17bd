-- qd1.sql — the QD~1 detector: are an object's commands issued one at a time?
-- Per trace_id with >= 4 tagged commands (in submit order), the gaps between
-- consecutive submits; the object is a "load" when its first command is a
-- read, else a "store". The service time is p25 of the real durations of the
-- matching command op (read for load, write for store) over tagged commands:
-- at QD1 the device is unloaded, so its latency floor is the reference.
-- Verdict: "QD~1 (gap ~= service time — serialized)" when gap_p50 >= 0.5 x
-- service, else "pipelined"; without completions "QD~1 suspicious (gap >=
-- 40us)" when gap_p50 >= 40 us.
-- Inputs: kvio_command, kvio_sample, kvio_pct (prelude.sql).
DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
WITH tagged_cmd AS (
  SELECT label, tid, ts, op,
    ts - lag(ts) OVER w AS gap,                    -- ns since the previous submit of the object
    first_value(op) OVER w AS first_op,
    count(*) OVER (PARTITION BY label, tid) AS n_cmds
  FROM kvio_command
  WHERE tagged
  WINDOW w AS (PARTITION BY label, tid ORDER BY ts, id)
), obj_gap AS (
  SELECT label, CASE WHEN first_op = 'read' THEN 'load' ELSE 'store' END AS op, gap
  FROM tagged_cmd
  WHERE n_cmds >= 4
)
SELECT label, op, gap FROM obj_gap WHERE gap IS NOT NULL              -- submit gaps
UNION ALL
SELECT label, 'objects:' || op, 1 FROM obj_gap WHERE gap IS NULL      -- one row per object
UNION ALL
SELECT label, 'svc:' || op, dur FROM kvio_command WHERE tagged AND real AND op IN ('read', 'write')
ORDER BY 1, 2, 3;
WITH pct AS MATERIALIZED (SELECT * FROM kvio_pct)
SELECT
  g.label,
  g.grp AS op,                                     -- load | store
  g.p50 AS gap_p50,                                -- submit gap p50 (ns)
  g.p95 AS gap_p95,                                -- submit gap p95 (ns)
  s.p25 AS svc,                                    -- service time (ns), NULL without completions
  o.n AS n_objects,                                -- objects with >= 4 commands
  CASE
    WHEN s.p25 > 0 THEN
      CASE WHEN g.p50 >= 0.5 * s.p25 THEN 'QD~1 (gap ~= service time — serialized)' ELSE 'pipelined' END
    ELSE
      CASE WHEN g.p50 >= 40000 THEN 'QD~1 suspicious (gap >= 40us)' ELSE 'pipelined' END
  END AS verdict
FROM pct g
JOIN pct o ON o.label = g.label AND o.grp = 'objects:' || g.grp
LEFT JOIN pct s ON s.label = g.label
  AND s.grp = 'svc:' || CASE g.grp WHEN 'load' THEN 'read' ELSE 'write' END
WHERE g.grp IN ('load', 'store')
ORDER BY g.label, g.grp;
