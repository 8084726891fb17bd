-- html_objects.sql — object span CDFs, and pre-submit time and device window
-- CDFs beside them (kvio-report --html). It draws objects.sql's
-- samples (groups span:<op> and pre:<op>) and each object's device window (win:<op>):
--   device window  last completion - first submit of the object's tagged
--                  commands (ns), for objects whose commands all have a real
--                  duration (without completions the end is not known)
-- over the same objects (no error, op store | load | delete). Each series is
-- downsampled to kvio_cdf_grid's quantiles (kvio_quantiles).
-- Inputs: kvio_object, kvio_command, kvio_cmd_proc, kvio_proc, kvio_cdf_grid (prelude.sql);
-- kvio_group_gather, kvio_pct_gather, kvio_quantiles (the extension).

-- kvio_html_obj_win: per (label id, trace_id), the device's first submit and
-- last end, and whether every command of it has a real duration
DROP TABLE IF EXISTS temp.kvio_html_obj_win;
CREATE TEMP TABLE kvio_html_obj_win(lid INT, tid INT, t0 INT, t1 INT, all_real INT, PRIMARY KEY (lid, tid));
INSERT INTO kvio_html_obj_win                      -- one hashed pass (GROUP BY lid, tid would sort every command)
SELECT k1, k2, max(CASE col WHEN 1 THEN min END), max(CASE col WHEN 2 THEN max END), max(CASE col WHEN 3 THEN min END)
FROM kvio_groups((SELECT kvio_group_gather(lid, tid, ts, ts_end, real) FROM kvio_command_batches WHERE tid > 0))
GROUP BY k1, k2;

-- kvio_html_ok: the objects drawn (no error, op store | load | delete) and
-- the label id of their commands
DROP TABLE IF EXISTS temp.kvio_html_ok;
CREATE TEMP TABLE kvio_html_ok AS
SELECT o.label, o.op, o.ts, o.dur, o.tid,
  (SELECT p.lid FROM kvio_cmd_proc p JOIN kvio_proc n ON n.upid = p.lid WHERE n.label = o.label) AS lid
FROM kvio_object o
WHERE NOT o.failed AND o.op IN ('store', 'load', 'delete');

SELECT
  CASE WHEN c.k2 LIKE 'span:%' THEN c.k2 ELSE 'pre:' || substr(c.k2, 5) END AS chart, -- span:<op> | pre:<op>
  c.k1 AS label,                                   -- arm
  CASE substr(c.k2, 1, 4)
    WHEN 'span' THEN '' WHEN 'pre:' THEN 'pre-submit' ELSE 'device window' END AS role,
  c.v AS x,                                        -- span, pre-submit time or device window (ns)
  (c.rank + 1) * 1.0 / c.n AS y                    -- share of the objects <= x
FROM kvio_quantiles((
  SELECT kvio_pct_gather(label, grp, v) FROM (
    SELECT label, 'span:' || op AS grp, dur AS v FROM kvio_html_ok
    UNION ALL
    SELECT ok.label, 'pre:' || ok.op, w.t0 - ok.ts
    FROM kvio_html_ok ok JOIN kvio_html_obj_win w ON w.lid = ok.lid AND w.tid = ok.tid
    UNION ALL
    SELECT ok.label, 'win:' || ok.op, w.t1 - w.t0
    FROM kvio_html_ok ok JOIN kvio_html_obj_win w ON w.lid = ok.lid AND w.tid = ok.tid
    WHERE w.all_real)), (SELECT grid FROM kvio_cdf_grid)) c
ORDER BY chart, label, role, y;
