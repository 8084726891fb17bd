-- space.sql — the space axis of the pool's writes, in submit order.
--   writes       write commands
--   lba_reuse    writes whose slba was written before (slot reuse)
--   seq_pct      share of writes (after the first) that start where the
--                previous one ended: slba = prev.slba + prev.data_len / lba_bytes
--   header_cmds  writes classified as object headers (role = header)
-- lba_bytes and header_bytes come from capture_info (else 4096 and 131072);
-- header byte share = header_cmds * header_bytes / tagged bytes.
-- Inputs: kvio_pool, kvio_proc (prelude.sql), capture_info slices.
WITH info AS (
  SELECT p.label,
    coalesce(extract_arg(s.arg_set_id, 'debug.lba_bytes'), 4096) AS lba,
    coalesce(extract_arg(s.arg_set_id, 'debug.header_bytes'), 131072) AS hdr
  FROM slice s JOIN process_track pt ON s.track_id = pt.id JOIN kvio_proc p USING (upid)
  WHERE s.name = 'capture_info'
), w AS (
  SELECT c.label, c.slba, c.role,
    row_number() OVER (PARTITION BY c.label, c.slba ORDER BY c.ts, c.id) AS nth_write_of_slba,
    lag(c.slba) OVER o AS prev_slba,
    lag(c.dlen) OVER o AS prev_dlen,
    row_number() OVER o AS i,
    coalesce(i.lba, 4096) AS lba
  FROM kvio_pool c LEFT JOIN info i USING (label)
  WHERE c.op = 'write'
  WINDOW o AS (PARTITION BY c.label ORDER BY c.ts, c.id)
)
SELECT
  w.label,
  count(*) AS writes,
  sum(nth_write_of_slba > 1) AS lba_reuse,
  sum(i > 1 AND slba = prev_slba + coalesce(prev_dlen, 0) / lba) * 1.0 / max(1, count(*) - 1) AS seq_pct,
  sum(role = 'header') AS header_cmds,
  (SELECT coalesce(hdr, 131072) FROM info WHERE info.label = w.label) AS header_bytes
FROM w
GROUP BY w.label
ORDER BY w.label;
