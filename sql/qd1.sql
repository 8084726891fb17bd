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

-- kvio_qd1_cmd: tagged commands numbered (pos) in (label, trace_id, submit) order,
-- so each object is a run of positions and its previous submit is pos - 1
DROP TABLE IF EXISTS temp.kvio_qd1_cmd;
CREATE TEMP TABLE kvio_qd1_cmd(pos INTEGER PRIMARY KEY, label TEXT, tid INT, ts INT, op TEXT);
INSERT INTO kvio_qd1_cmd(label, tid, ts, op)
SELECT label, tid, ts, op FROM kvio_command WHERE tagged ORDER BY label, tid, ts, id;

DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
WITH object AS (                                   -- one row per object: its run of positions
  SELECT c.pos AS first, c.label, c.op AS first_op,
    coalesce((SELECT min(n.pos) FROM kvio_qd1_cmd n WHERE n.pos > c.pos AND (n.tid <> c.tid OR n.label <> c.label)),
             (SELECT max(pos) + 1 FROM kvio_qd1_cmd)) - c.pos AS n_cmds
  FROM kvio_qd1_cmd c LEFT JOIN kvio_qd1_cmd p ON p.pos = c.pos - 1
  WHERE p.pos IS NULL OR p.tid <> c.tid OR p.label <> c.label
), obj_gap AS (
  SELECT o.label, CASE WHEN o.first_op = 'read' THEN 'load' ELSE 'store' END AS op,
    c.ts - p.ts AS gap                             -- ns since the previous submit of the object
  FROM object o JOIN kvio_qd1_cmd c ON c.pos > o.first AND c.pos < o.first + o.n_cmds
  JOIN kvio_qd1_cmd p ON p.pos = c.pos - 1
  WHERE o.n_cmds >= 4
)
SELECT label, op, gap FROM obj_gap                                     -- submit gaps
UNION ALL
SELECT label, 'objects:' || CASE WHEN first_op = 'read' THEN 'load' ELSE 'store' END, 1
FROM object WHERE n_cmds >= 4                                          -- one row per object
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
