-- samples.sql — the value sets behind kvio-report --compare's within-run test: for
-- each comparable metric with one value per command or object, the values its own
-- sql/ file takes its percentiles over, as (value, count) in ascending order.
-- Each set restates its file's gather (latency.sql, objects.sql, qd1.sql); batch.size reads
-- batches.sql's own (prelude.sql's kvio_batch). tests/t_41_compare.sh holds every set's kvio
-- quantiles to the report's numbers, so the two cannot drift apart. Only --compare with
-- one database a side reads it.
--   label   capture label
--   sample  read | write: command latency (latency.sql)
--           load.span | store.span | delete.span: object span; load.own | store.own: the object's
--           own first command - object begin (objects.sql)
--           load.gap | store.gap: submit gaps of objects with >= 4 commands (qd1.sql)
--           batch.size: commands per inferred batch (batches.sql)
--   v       a value (ns; commands for batch.size)
--   n       how many times it occurs
-- kvio-report --compare takes them on the connection a side's report ran on, after
-- its analyses: a shared gather they filled (kvio_batch) is read, not gathered again.
-- Inputs: kvio_pool_batches, kvio_command_ordered_batches, kvio_batch, kvio_filled,
-- kvio_object, kvio_command, kvio_proc (prelude.sql), kvio_cmd_name, flow; kvio_values (the extension).
INSERT INTO kvio_batch SELECT * FROM kvio_batch_fill; -- batches.sql's gather, unless this connection has it
INSERT OR IGNORE INTO kvio_filled VALUES ('kvio_batch');

WITH lat AS (                                      -- latency.sql's set
  SELECT p.label, o.name AS sample, v.v, v.count AS n
  FROM kvio_values((SELECT kvio_pct_gather(lid, op_id, dur) FROM kvio_pool_batches WHERE real = 1 AND op IN ('read', 'write'))) v
  JOIN kvio_proc p ON p.upid = v.k1
  JOIN kvio_cmd_name o ON o.id = v.k2
), ok AS (                                         -- objects.sql's objects
  SELECT * FROM kvio_object
  WHERE (error IS NULL OR error = '' OR error = 0) AND op IN ('store', 'load', 'delete')
), obj AS (                                        -- objects.sql's span and own pre-submit sets
  SELECT v.k1 AS label, v.k2 AS sample, v.v, v.count AS n FROM kvio_values((SELECT kvio_pct_gather(label, grp, v) FROM (
    SELECT label, op || '.span' AS grp, dur AS v FROM ok
    UNION ALL
    SELECT ok.label, ok.op || '.own', c.ts - ok.ts FROM ok JOIN flow f ON f.slice_out = ok.id JOIN kvio_command c ON c.id = f.slice_in))) v
), gap AS (                                        -- qd1.sql's gap set
  SELECT p.label, CASE v.k2 WHEN 1 THEN 'load.gap' ELSE 'store.gap' END AS sample, v.v, v.count AS n
  FROM kvio_values((SELECT kvio_gaps_gather(lid, tid, ts, kvio_is(op, 'read'), 4)
                    FROM kvio_command_ordered_batches WHERE tid > 0)) v
  JOIN kvio_proc p ON p.upid = v.k1
), bat AS (                                        -- batches.sql's set: kvio_batch's sizes
  SELECT p.label, 'batch.size' AS sample, b.n AS v, count(*) AS n
  FROM kvio_batch b JOIN kvio_proc p ON p.upid = b.lid
  GROUP BY p.label, b.n
)
SELECT label, sample, v, n FROM (
  SELECT * FROM lat UNION ALL SELECT * FROM obj UNION ALL SELECT * FROM gap UNION ALL SELECT * FROM bat
)
ORDER BY label, sample, v;
