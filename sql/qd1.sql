-- qd1.sql — the QD~1 detector: are a label's objects' commands issued one at a time?
-- Per trace_id with >= qd1_min_cmds (4) tagged commands (in submit order), the
-- gaps between consecutive submits, over the label's objects together: the
-- object is a "load" when its first command is a read, else a "store". The
-- rule (prelude.sql: kvio_rule, kvio_qd1_svc, kvio_qd1_verdict; findings.sql
-- applies it to each object): the service time is p25 of the real durations of
-- the matching command op (read for load, write for store) over tagged
-- commands. Verdict: "QD~1 (gap ~= service time — serialized)" when gap_p50 >=
-- 0.5 x service, else "pipelined"; without completions "QD~1 suspicious (gap
-- >= 40us)" when gap_p50 >= 40 us.
-- Inputs: kvio_command_ordered_batches, kvio_proc, kvio_rule, kvio_qd1_gap,
-- kvio_latency, kvio_filled, kvio_qd1_verdict (prelude.sql); kvio_pct, kvio_is (the extension).
DELETE FROM temp.kvio_qd1_gap;
INSERT INTO temp.kvio_qd1_gap                      -- per (lid, load = 1 | store = 0): submit gaps, objects
SELECT k1, NULL, CASE k2 WHEN 1 THEN 'load' ELSE 'store' END, p50, p95, members FROM kvio_pct((
  SELECT kvio_gaps_gather(lid, tid, ts, kvio_is(op, 'read'), (SELECT qd1_min_cmds FROM kvio_rule)) -- the class:
  FROM kvio_command_ordered_batches WHERE tid > 0));                                               -- its first command is a read

INSERT INTO kvio_latency SELECT * FROM kvio_latency_fill; -- the service time's (kvio_qd1_svc)
INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_latency');

SELECT
  p.label,
  v.op,                                            -- load | store
  v.gap_p50,                                       -- submit gap p50 (ns)
  v.gap_p95,                                       -- submit gap p95 (ns)
  v.svc,                                           -- service time (ns), NULL without completions
  v.n_objects,                                     -- objects with >= 4 commands
  v.verdict
FROM kvio_qd1_verdict v
JOIN kvio_proc p ON p.upid = v.lid
ORDER BY p.label, v.op;
