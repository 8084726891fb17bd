-- qd1.sql — the QD~1 detector: are an object's commands issued one at a time?
-- Per trace_id with >= 4 tagged commands (in submit order), the gaps between
-- consecutive submits; the object is a "load" when its first command is a
-- read, else a "store". The service time is p25 of the real durations of the
-- matching command op (read for load, write for store) over tagged commands:
-- at QD1 the device is unloaded, so its latency floor is the reference.
-- Verdict: "QD~1 (gap ~= service time — serialized)" when gap_p50 >= 0.5 x
-- service, else "pipelined"; without completions "QD~1 suspicious (gap >=
-- 40us)" when gap_p50 >= 40 us.
-- Inputs: kvio_command_ordered_batches, kvio_command_batches, kvio_proc (prelude.sql), kvio_cmd_name;
-- kvio_pct, kvio_is (the extension).
WITH gap AS (                                      -- per (lid, load = 1 | store = 0): submit gaps, objects
  SELECT k1, CASE k2 WHEN 1 THEN 'load' ELSE 'store' END AS k2, p50, p95, members FROM kvio_pct((
    SELECT kvio_gaps_gather(lid, tid, ts, kvio_is(op, 'read'), 4) -- the class: its first command is a read
    FROM kvio_command_ordered_batches WHERE tid > 0))
), svc AS (                                        -- per (lid, read|write): real durations
  SELECT k1, o.name AS k2, p25 FROM kvio_pct((
    SELECT kvio_pct_gather(lid, op_id, dur) FROM kvio_command_batches WHERE tid > 0 AND real = 1 AND op IN ('read', 'write')))
  JOIN kvio_cmd_name o ON o.id = k2
)
SELECT
  p.label,
  g.k2 AS op,                                      -- load | store
  g.p50 AS gap_p50,                                -- submit gap p50 (ns)
  g.p95 AS gap_p95,                                -- submit gap p95 (ns)
  s.p25 AS svc,                                    -- service time (ns), NULL without completions
  g.members AS n_objects,                          -- objects with >= 4 commands
  CASE
    WHEN s.p25 > 0 THEN
      CASE WHEN g.p50 >= 0.5 * s.p25 THEN 'QD~1 (gap ~= service time — serialized)' ELSE 'pipelined' END
    ELSE
      CASE WHEN g.p50 >= 40000 THEN 'QD~1 suspicious (gap >= 40us)' ELSE 'pipelined' END
  END AS verdict
FROM gap g
JOIN kvio_proc p ON p.upid = g.k1
LEFT JOIN svc s ON s.k1 = g.k1 AND s.k2 = CASE g.k2 WHEN 'load' THEN 'read' ELSE 'write' END
ORDER BY p.label, g.k2;
