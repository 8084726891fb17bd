-- html_serving.sql — serving-layer span CDFs per op, e.g. TTFT (kvio-report
-- --html). It draws serving.sql's samples (span durations by label and op),
-- downsampled to kvio_cdf_grid's quantiles (kvio_quantiles).
-- Inputs: kvio_proc, kvio_cdf_grid (prelude.sql); kvio_pct_gather, kvio_quantiles (the extension).
SELECT
  'serving:' || c.k2 AS chart,                     -- serving:<op>
  c.k1 AS label,                                   -- arm
  '' AS role,
  c.v AS x,                                        -- span (ns)
  (c.rank + 1) * 1.0 / c.n AS y                    -- share of the spans <= x
FROM kvio_quantiles((
  SELECT kvio_pct_gather(p.label, coalesce(nullif(CAST(extract_arg(s.arg_set_id, 'debug.op') AS TEXT), ''), s.name), s.dur)
  FROM slice s JOIN process_track pt ON s.track_id = pt.id JOIN kvio_proc p USING (upid)
  WHERE p.name LIKE 'Serving%'
    AND (:win_hi IS NULL OR s.ts <= :win_hi) AND (:win_lo IS NULL OR s.ts + s.dur >= :win_lo)),
  (SELECT grid FROM kvio_cdf_grid)) c
ORDER BY chart, label, role, y;
