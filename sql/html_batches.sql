-- html_batches.sql — inferred batch sizes as a histogram (kvio-report --html).
-- It counts batches.sql's samples (kvio_sample group
-- size: submits per batch at :batch_gap_ns), one point per size seen.
-- Inputs: prelude.sql's tables and views (the samples batches.sql's operators take are
-- gathered here row by row, the old way: the operators keep none).

-- The samples it draws, as batches.sql gathered them before its operators (kvio_pct
-- and friends keep no rows): the old statements, kept here for the picture.
-- kvio_batch_sub: the submits numbered (pos) in (label, ts, id) order;
-- kvio_batch_start: the positions that start a batch (a label's first submit,
-- or one more than the gap after the previous). A batch runs to the next start.
DROP TABLE IF EXISTS temp.kvio_batch_sub;
DROP TABLE IF EXISTS temp.kvio_batch_start;
CREATE TEMP TABLE kvio_batch_sub(pos INTEGER PRIMARY KEY, label INT, ts INT); -- label: the lid
INSERT INTO kvio_batch_sub(label, ts) SELECT lid, ts FROM kvio_pool ORDER BY lid, ts, id;
CREATE TEMP TABLE kvio_batch_start(pos INTEGER PRIMARY KEY, label INT);
INSERT INTO kvio_batch_start
SELECT c.pos, c.label
FROM kvio_batch_sub c LEFT JOIN kvio_batch_sub p ON p.pos = c.pos - 1
WHERE p.pos IS NULL OR p.label <> c.label OR c.ts - p.ts > coalesce(:batch_gap_ns, 50000);

DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
SELECT label, 'size',
  coalesce((SELECT min(n.pos) FROM kvio_batch_start n WHERE n.pos > s.pos),
           (SELECT max(pos) + 1 FROM kvio_batch_sub)) - s.pos   -- submits in the batch
FROM kvio_batch_start s
ORDER BY 1, 2, 3;

SELECT
  'batch:size' AS chart,
  (SELECT label FROM kvio_proc WHERE upid = kvio_sample.label) AS label, -- arm
  '' AS role,
  v AS x,                                          -- commands in the batch
  count(*) AS y                                    -- batches of that size
FROM kvio_sample
WHERE grp = 'size'
GROUP BY kvio_sample.label, v
ORDER BY chart, label, role, x;
