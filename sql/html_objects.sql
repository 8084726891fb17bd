-- html_objects.sql — object span CDFs, and pre-submit time and device window
-- CDFs beside them (kvio-report --html). It draws objects.sql's
-- samples (kvio_sample groups span:<op> and pre:<op>), then refills
-- kvio_sample with each object's device window:
--   device window  last completion - first submit of the object's tagged
--                  commands (ns), for objects whose commands all have a real
--                  duration (without completions the end is not known)
-- over the same objects (no error, op store | load | delete). Each series is
-- downsampled to kvio_cdf's grid.
-- Inputs: prelude.sql's tables and views (the samples objects.sql's operators take are
-- gathered here row by row, the old way: the operators keep none), kvio_object, kvio_command,
-- kvio_cdf (prelude.sql).

-- The samples it draws, as objects.sql gathered them before its operators (kvio_pct
-- and friends keep no rows): the old statements, kept here for the picture.
-- kvio_html_obj_win: per (label id, trace_id), the device's first submit and
-- last end, and whether every command of it has a real duration
DROP TABLE IF EXISTS temp.kvio_html_obj_win;
CREATE TEMP TABLE kvio_html_obj_win(lid INT, tid INT, t0 INT, t1 INT, all_real INT, PRIMARY KEY (lid, tid));
INSERT INTO kvio_html_obj_win
SELECT lid, tid, min(ts), max(ts + dur), min(real) FROM kvio_command WHERE tagged GROUP BY lid, tid;

-- kvio_html_ok: the objects drawn (no error, op store | load | delete) and
-- the label id of their commands
DROP TABLE IF EXISTS temp.kvio_html_ok;
CREATE TEMP TABLE kvio_html_ok AS
SELECT o.label, o.op, o.ts, o.dur, o.tid,
  (SELECT p.lid FROM kvio_cmd_proc p JOIN kvio_proc n ON n.upid = p.lid WHERE n.label = o.label) AS lid
FROM kvio_object o
WHERE (o.error IS NULL OR o.error = '' OR o.error = 0) AND o.op IN ('store', 'load', 'delete');

DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
SELECT label, 'span:' || op, dur FROM kvio_html_ok
UNION ALL
SELECT ok.label, 'pre:' || ok.op, w.t0 - ok.ts FROM kvio_html_ok ok JOIN kvio_html_obj_win w ON w.lid = ok.lid AND w.tid = ok.tid
ORDER BY 1, 2, 3;

-- kvio_html_obj: the CDF points of the span and pre-submit samples
DROP TABLE IF EXISTS temp.kvio_html_obj;
CREATE TEMP TABLE kvio_html_obj AS
SELECT label, grp, v, frac FROM kvio_cdf WHERE grp LIKE 'span:%' OR grp LIKE 'pre:%';

DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
SELECT ok.label, 'win:' || ok.op, w.t1 - w.t0
FROM kvio_html_ok ok JOIN kvio_html_obj_win w ON w.lid = ok.lid AND w.tid = ok.tid
WHERE w.all_real
ORDER BY 1, 2, 3;

SELECT
  CASE WHEN grp LIKE 'span:%' THEN grp ELSE 'pre:' || substr(grp, 5) END AS chart, -- span:<op> | pre:<op>
  label,                                           -- arm
  CASE substr(grp, 1, 4)
    WHEN 'span' THEN '' WHEN 'pre:' THEN 'pre-submit' ELSE 'device window' END AS role,
  v AS x,                                          -- span, pre-submit time or device window (ns)
  frac AS y                                        -- share of the objects <= x
FROM (SELECT label, grp, v, frac FROM kvio_html_obj UNION ALL SELECT label, grp, v, frac FROM kvio_cdf)
ORDER BY chart, label, role, y;
