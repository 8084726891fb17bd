-- html_serving.sql — serving-layer span CDFs per op, e.g. TTFT (kvio-report
-- --html). It draws serving.sql's samples (kvio_sample
-- grouped by label and op), downsampled to kvio_cdf's grid.
-- Inputs: prelude.sql's tables and views (the samples serving.sql's operators take are
-- gathered here row by row, the old way: the operators keep none), kvio_cdf (prelude.sql).

-- The samples it draws, as serving.sql gathered them before its operators (kvio_pct
-- and friends keep no rows): the old statements, kept here for the picture.
DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
SELECT p.label, coalesce(nullif(CAST(extract_arg(s.arg_set_id, 'debug.op') AS TEXT), ''), s.name), s.dur
FROM slice s JOIN process_track pt ON s.track_id = pt.id JOIN kvio_proc p USING (upid)
WHERE p.name LIKE 'Serving%'
  AND (:win_hi IS NULL OR s.ts <= :win_hi) AND (:win_lo IS NULL OR s.ts + s.dur >= :win_lo)
ORDER BY 1, 2, 3;

SELECT
  'serving:' || grp AS chart,                      -- serving:<op>
  label,                                           -- arm
  '' AS role,
  v AS x,                                          -- span (ns)
  frac AS y                                        -- share of the spans <= x
FROM kvio_cdf
ORDER BY chart, label, role, y;
