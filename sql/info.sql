-- info.sql — capture facts per label from the capture_info instant.
-- Inputs: kvio_proc (prelude.sql), capture_info slices (in kvio_slice, not among the commands).
SELECT
  coalesce(extract_arg(s.arg_set_id, 'debug.label'), p.label) AS label,
  extract_arg(s.arg_set_id, 'debug.kvio_schema') AS schema,
  extract_arg(s.arg_set_id, 'debug.hostname') AS hostname,
  extract_arg(s.arg_set_id, 'debug.device_path') AS device,
  extract_arg(s.arg_set_id, 'debug.lba_bytes') AS lba_bytes,
  extract_arg(s.arg_set_id, 'debug.header_bytes') AS header_bytes
FROM kvio_slice s JOIN process_track pt ON s.track_id = pt.id JOIN kvio_proc p USING (upid)
WHERE s.name = 'capture_info'
ORDER BY s.id;
