-- html_objects.sql — object span CDFs, and pre-submit time and device window
-- CDFs beside them (kvio-report --html). Run after objects.sql: it draws that
-- file's samples (kvio_sample groups span:<op> and pre:<op>), then refills
-- kvio_sample with each object's device window:
--   device window  last completion - first submit of the object's tagged
--                  commands (ns), for objects whose commands all have a real
--                  duration (without completions the end is not known)
-- over the same objects (no error, op store | load | delete). Each series is
-- downsampled to kvio_cdf's grid.
-- Inputs: kvio_sample as objects.sql leaves it, kvio_object, kvio_command,
-- kvio_cdf (prelude.sql).

-- The samples it draws, as objects.sql gathered them before its operators (kvio_pct
-- and friends keep no rows): the old statements, kept here for the picture.
DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
WITH ok AS (
  SELECT * FROM kvio_object
  WHERE (error IS NULL OR error = '' OR error = 0) AND op IN ('store', 'load', 'delete')
), first_cmd AS (
  SELECT label, tid, min(ts) AS t0 FROM kvio_command WHERE tagged GROUP BY label, tid
)
SELECT label, 'span:' || op, dur FROM ok
UNION ALL
SELECT label, 'mbs:' || op, coalesce(bytes, 0) / max(1e-9, dur / 1e9) / 1e6 FROM ok WHERE dur <> 0
UNION ALL
SELECT ok.label, 'pre:' || ok.op, f.t0 - ok.ts FROM ok JOIN first_cmd f ON f.label = ok.label AND f.tid = ok.tid
ORDER BY 1, 2, 3;

-- kvio_html_obj: the CDF points of the span and pre-submit samples
DROP TABLE IF EXISTS temp.kvio_html_obj;
CREATE TEMP TABLE kvio_html_obj AS
SELECT label, grp, v, frac FROM kvio_cdf WHERE grp LIKE 'span:%' OR grp LIKE 'pre:%';

-- kvio_html_obj_win: per (label, trace_id), the device's first submit and
-- last end, and whether every command of it has a real duration
DROP TABLE IF EXISTS temp.kvio_html_obj_win;
CREATE TEMP TABLE kvio_html_obj_win(label TEXT, tid INT, t0 INT, t1 INT, all_real INT, PRIMARY KEY (label, tid));
INSERT INTO kvio_html_obj_win
SELECT label, tid, min(ts), max(ts + dur), min(real) FROM kvio_command WHERE tagged GROUP BY label, tid;

DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
WITH ok AS (
  SELECT * FROM kvio_object
  WHERE (error IS NULL OR error = '' OR error = 0) AND op IN ('store', 'load', 'delete')
)
SELECT ok.label, 'win:' || ok.op, w.t1 - w.t0
FROM ok JOIN kvio_html_obj_win w ON w.label = ok.label AND w.tid = ok.tid
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
