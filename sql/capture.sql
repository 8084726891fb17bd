-- capture.sql — ingest bookkeeping per label (kvio databases only: it reads
-- kvio_stats, which trace_processor does not have).
--   malformed_lines  terminated lines that could not be used
--   truncated_tail   unterminated, unusable last lines
--   drops            the tracer's final ring-buffer drop count (NULL without a drops line)
--   cq_overflow      cq_overflow events seen
--   clock_anomalies  semantic op ends earlier than their last device command
SELECT
  label,
  max(CASE name WHEN 'malformed_lines' THEN value END) AS malformed_lines,
  max(CASE name WHEN 'truncated_tail' THEN value END) AS truncated_tail,
  max(CASE name WHEN 'drops' THEN value END) AS drops,
  max(CASE name WHEN 'cq_overflow' THEN value END) AS cq_overflow,
  max(CASE name WHEN 'clock_anomalies' THEN value END) AS clock_anomalies
FROM kvio_stats
GROUP BY label
ORDER BY label;
