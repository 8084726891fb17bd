-- serving.sql — serving-layer request spans per label and op (ns): n, p50, p99.
-- Spans on the "Serving <label>" process; grouped by the op arg, else the
-- slice name. The window's time bounds apply (serving spans carry no trace_id).
-- Inputs: kvio_proc, kvio_sample, kvio_pct (prelude.sql).
DELETE FROM kvio_sample;
INSERT INTO kvio_sample(label, grp, v)
SELECT p.label, coalesce(nullif(CAST(extract_arg(s.arg_set_id, 'debug.op') AS TEXT), ''), s.name), s.dur
FROM slice s JOIN process_track pt ON s.track_id = pt.id JOIN kvio_proc p USING (upid)
WHERE p.name LIKE 'Serving%'
  AND (:win_hi IS NULL OR s.ts <= :win_hi) AND (:win_lo IS NULL OR s.ts + s.dur >= :win_lo)
ORDER BY 1, 2, 3;
SELECT label, grp AS op, n, p50, p99 FROM kvio_pct ORDER BY label, op;
