-- html_qd1.sql — the QD1 picture (kvio-report --html): per label and op, the
-- histogram of per-object submission gaps. It counts qd1.sql's
-- gap samples (kvio_sample groups load and store: consecutive submits
-- of objects with >= 4 commands). Bins are log-spaced, 10 per decade: bin b
-- holds gaps in [10^(b/10), 10^((b+1)/10)) ns (a gap of 0 counts as 1 ns);
-- every bin from one below the lowest to one above the highest is listed, empty
-- ones as 0, so the curve closes at both ends. (The page draws the service
-- time, qd1's svc, as a vertical line: a serialized path peaks on it.)
-- Inputs: prelude.sql's tables and views (the samples qd1.sql's operators take are
-- gathered here row by row, the old way: the operators keep none).

-- The samples it draws, as qd1.sql gathered them before its operators (kvio_pct
-- and friends keep no rows): the old statements, kept here for the picture.
-- kvio_qd1_cmd: tagged commands numbered (pos) in (label, trace_id, submit) order,
-- so each object is a run of positions and its previous submit is pos - 1
DROP TABLE IF EXISTS temp.kvio_qd1_cmd;
CREATE TEMP TABLE kvio_qd1_cmd(pos INTEGER PRIMARY KEY, label INT, tid INT, ts INT, op TEXT); -- label: the lid
INSERT INTO kvio_qd1_cmd(label, tid, ts, op)
SELECT lid, tid, ts, op FROM kvio_command WHERE tagged ORDER BY lid, tid, ts, id;

DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
WITH object AS MATERIALIZED (                      -- one row per object: its run of positions
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
ORDER BY 1, 2, 3;

WITH gap AS (
  SELECT label, grp AS op, CAST(floor(10 * log10(max(v, 1))) AS INTEGER) AS bin
  FROM kvio_sample WHERE grp IN ('load', 'store')
), counted AS (                                    -- gaps per (label, op, bin)
  SELECT label, op, bin, count(*) AS n FROM gap GROUP BY label, op, bin
), bin_range(label, op, bin, hi) AS (              -- every bin of the drawn range
  SELECT label, op, min(bin) - 1, max(bin) + 1 FROM counted GROUP BY label, op
  UNION ALL
  SELECT label, op, bin + 1, hi FROM bin_range WHERE bin < hi
)
SELECT
  'qd1:' || r.op AS chart,                         -- qd1:load | qd1:store
  (SELECT label FROM kvio_proc WHERE upid = r.label) AS label, -- arm (r.label: its lid)
  '' AS role,
  power(10, (r.bin + 0.5) / 10.0) AS x,            -- bin centre, geometric (ns)
  coalesce(c.n, 0) AS y                            -- gaps in the bin
FROM bin_range r
LEFT JOIN counted c ON c.label = r.label AND c.op = r.op AND c.bin = r.bin
ORDER BY chart, label, role, r.bin;
