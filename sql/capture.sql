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
--   join_kind        how commands found their objects: user_data | key | offset
--                    (metadata kvio_join; NULL in a database that does not say)
--   time_start_ns, time_end_ns  the time window the metrics describe: the
--                    ingest's --time-range (metadata) and kvio-report's
--                    (:win_lo, :win_hi) intersected; NULL without either
--   tid_lo, tid_hi   the same for --trace-id
--   off_*            --join-by-offset's accounting (NULL under another join):
--                    commands unique / cross_object / gap_spill / unmatched,
--                    cookie_cmds (user_data >> 32 != 0), parity_total (of those,
--                    attributed by offset), parity_agree (and matching their cookie)
--   completion_probe 1, or 0 when the device file has no nvme_cmp line (the
--                    tracer's completion probe was off: no latency, no queue
--                    depth); NULL without a device file or from an older kvio
--   follow_commit, follow_final  a database kvio-ingest --follow wrote: the
--                    commit a reader sees (1, 2, ...) and 1 once the follow
--                    ended (its final commit), else 0; NULL for a one-shot ingest
--   follow_*         an interim commit's view of what the follower holds that
--                    the database does not show yet (NULL in a final or one-shot
--                    database): waiting_cmds (commands read and joined, not
--                    written: a command whose completion has not come holds the
--                    ones after it), pool_records (records read, not joined yet),
--                    unpaired_cmds and unpaired_objects (of the waiting, and of
--                    the commands a quiet commit wrote: without their completion
--                    so far, and their trace_ids), unpaired_written (of those,
--                    the ones a quiet commit wrote with the nominal duration:
--                    the device file stopped growing, a hung run), unpaired_age_ns
--                    (the latest device record read - the oldest unpaired one's
--                    submit) and unpaired_oldest_tid (its trace_id, 0 untagged),
--                    device_grew_ms (Unix time in ms when the device file last
--                    grew, as the follower saw it), pid (the follower's process)
WITH meta AS (
  SELECT
    (SELECT str_value FROM metadata WHERE name = 'kvio_join') AS join_kind,
    (SELECT int_value FROM metadata WHERE name = 'kvio_time_range_start_ns') AS t0,
    (SELECT int_value FROM metadata WHERE name = 'kvio_time_range_end_ns') AS t1,
    (SELECT int_value FROM metadata WHERE name = 'kvio_trace_id_lo') AS d0,
    (SELECT int_value FROM metadata WHERE name = 'kvio_trace_id_hi') AS d1,
    (SELECT int_value FROM metadata WHERE name = 'kvio_follow_commit') AS fc,
    (SELECT int_value FROM metadata WHERE name = 'kvio_follow_final') AS ff
)
SELECT
  label,
  max(CASE name WHEN 'malformed_lines' THEN value END) AS malformed_lines,
  max(CASE name WHEN 'truncated_tail' THEN value END) AS truncated_tail,
  max(CASE name WHEN 'drops' THEN value END) AS drops,
  max(CASE name WHEN 'cq_overflow' THEN value END) AS cq_overflow,
  max(CASE name WHEN 'clock_anomalies' THEN value END) AS clock_anomalies,
  max(CASE name WHEN 'cmp_unpaired' THEN value END) AS cmp_unpaired,
  max(CASE name WHEN 'cmp_after_horizon' THEN value END) AS cmp_after_horizon,
  max(CASE name WHEN 'late_lines' THEN value END) AS late_lines,
  max(CASE name WHEN 'offset_unique' THEN value END) AS off_unique,
  max(CASE name WHEN 'offset_cross_object' THEN value END) AS off_cross_object,
  max(CASE name WHEN 'offset_gap_spill' THEN value END) AS off_gap_spill,
  max(CASE name WHEN 'offset_unmatched' THEN value END) AS off_unmatched,
  max(CASE name WHEN 'offset_cookie_cmds' THEN value END) AS off_cookie_cmds,
  max(CASE name WHEN 'offset_parity_agree' THEN value END) AS off_parity_agree,
  max(CASE name WHEN 'offset_parity_total' THEN value END) AS off_parity_total,
  (SELECT join_kind FROM meta) AS join_kind,
  (SELECT CASE WHEN t0 IS NULL THEN :win_lo WHEN :win_lo IS NULL THEN t0 ELSE max(t0, :win_lo) END FROM meta) AS time_start_ns,
  (SELECT CASE WHEN t1 IS NULL THEN :win_hi WHEN :win_hi IS NULL THEN t1 ELSE min(t1, :win_hi) END FROM meta) AS time_end_ns,
  (SELECT CASE WHEN d0 IS NULL THEN :win_tlo WHEN :win_tlo IS NULL THEN d0 ELSE max(d0, :win_tlo) END FROM meta) AS tid_lo,
  (SELECT CASE WHEN d1 IS NULL THEN :win_thi WHEN :win_thi IS NULL THEN d1 ELSE min(d1, :win_thi) END FROM meta) AS tid_hi,
  max(CASE name WHEN 'completion_probe' THEN value END) AS completion_probe,
  (SELECT fc FROM meta) AS follow_commit,
  (SELECT ff FROM meta) AS follow_final,
  max(CASE name WHEN 'follow_waiting_cmds' THEN value END) AS follow_waiting_cmds,
  max(CASE name WHEN 'follow_pool_records' THEN value END) AS follow_pool_records,
  max(CASE name WHEN 'follow_unpaired_cmds' THEN value END) AS follow_unpaired_cmds,
  max(CASE name WHEN 'follow_unpaired_objects' THEN value END) AS follow_unpaired_objects,
  max(CASE name WHEN 'follow_unpaired_written' THEN value END) AS follow_unpaired_written,
  max(CASE name WHEN 'follow_unpaired_age_ns' THEN value END) AS follow_unpaired_age_ns,
  max(CASE name WHEN 'follow_unpaired_oldest_tid' THEN value END) AS follow_unpaired_oldest_tid,
  max(CASE name WHEN 'follow_device_grew_ms' THEN value END) AS follow_device_grew_ms,
  max(CASE name WHEN 'follow_quiet_ms' THEN value END) AS follow_quiet_ms,
  max(CASE name WHEN 'follow_pid' THEN value END) AS follow_pid
FROM kvio_stats
GROUP BY label
ORDER BY label;
