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
-- Inputs: kvio_proc, kvio_qd1_gap, kvio_latency, kvio_filled, kvio_qd1_verdict
-- (prelude.sql: the gathers, over kvio_command_ordered_batches and kvio_pool_batches).
INSERT INTO kvio_qd1_gap SELECT * FROM kvio_qd1_gap_fill; -- per (lid, load | store): submit gaps, objects
INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_qd1_gap');

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
WHERE v.tid IS NULL                                -- the label's objects together
ORDER BY p.label, v.op;
