-- capture.sql — ingest bookkeeping per label (kvio databases only: it reads
-- kvio_stats, which trace_processor does not have).
--   malformed_lines  terminated lines that could not be used
--   truncated_tail   unterminated, unusable last lines
--   drops            the tracer's final ring-buffer drop count (NULL without a drops line)
--   cq_overflow      cq_overflow events seen
--   clock_anomalies  semantic op ends earlier than their last device command
--   cmp_unpaired     completions that paired with no command
--   cmp_after_horizon  of those, completions that came after their command was
--                    given up (kvio-ingest --pair-horizon: a stall that long)
--   late_lines       device records joined out of time order (more than a read
--                    block older than records before them)
SELECT
  label,
  max(CASE name WHEN 'malformed_lines' THEN value END) AS malformed_lines,
  max(CASE name WHEN 'truncated_tail' THEN value END) AS truncated_tail,
  max(CASE name WHEN 'drops' THEN value END) AS drops,
  max(CASE name WHEN 'cq_overflow' THEN value END) AS cq_overflow,
  max(CASE name WHEN 'clock_anomalies' THEN value END) AS clock_anomalies,
  max(CASE name WHEN 'cmp_unpaired' THEN value END) AS cmp_unpaired,
  max(CASE name WHEN 'cmp_after_horizon' THEN value END) AS cmp_after_horizon,
  max(CASE name WHEN 'late_lines' THEN value END) AS late_lines
FROM kvio_stats
GROUP BY label
ORDER BY label;
