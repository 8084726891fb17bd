-- serving.sql — serving-layer request spans per label and op (ns): n, p50, p99.
-- Spans on the "Serving <label>" process; grouped by the op arg, else the
-- slice name. The window's time bounds apply (serving spans carry no trace_id).
-- Inputs: kvio_proc (prelude.sql); kvio_pct (the extension).
SELECT k1 AS label, k2 AS op, n, p50, p99
FROM kvio_pct((
  SELECT kvio_pct_gather(p.label, coalesce(nullif(CAST(extract_arg(s.arg_set_id, 'debug.op') AS TEXT), ''), s.name), s.dur)
  FROM kvio_slice s JOIN process_track pt ON s.track_id = pt.id JOIN kvio_proc p USING (upid)
  WHERE p.name LIKE 'Serving%'
    AND (:win_hi IS NULL OR s.ts <= :win_hi) AND (:win_lo IS NULL OR s.ts + s.dur >= :win_lo)))
ORDER BY label, op;
