-- space.sql — the space axis of the pool's writes, in submit order.
--   writes       write commands
--   lba_reuse    writes whose slba was written before (slot reuse)
--   seq_pct      share of writes (after the first) that start where the
--                previous one ended: slba = prev.slba + prev.data_len / lba_bytes
--   header_cmds  writes classified as object headers (role = header)
--   header_cmd_bytes  bytes of those header writes (their data_len)
-- lba_bytes and header_bytes come from capture_info (else 4096 and 131072);
-- the reference's header byte share = header_cmds * header_bytes / tagged
-- bytes (wrong without a kvio_meta line: 131072-byte headers assumed); the
-- text report's = header_cmd_bytes / tagged bytes.
-- Inputs: kvio_pool, kvio_proc (prelude.sql), capture_info slices.
-- kvio_space_w: the pool's writes numbered (pos) in (label, ts, id) order, so
-- the previous write of a label is pos - 1 (ts: for html_space.sql's picture).
DROP TABLE IF EXISTS temp.kvio_space_w;
CREATE TEMP TABLE kvio_space_w(pos INTEGER PRIMARY KEY, label TEXT, ts INT, slba INT, dlen INT, role TEXT);
INSERT INTO kvio_space_w(label, ts, slba, dlen, role)
SELECT label, ts, slba, dlen, role FROM kvio_pool WHERE op = 'write' ORDER BY label, ts, id;
WITH info AS (
  SELECT p.label,
    coalesce(extract_arg(s.arg_set_id, 'debug.lba_bytes'), 4096) AS lba,
    coalesce(extract_arg(s.arg_set_id, 'debug.header_bytes'), 131072) AS hdr
  FROM slice s JOIN process_track pt ON s.track_id = pt.id JOIN kvio_proc p USING (upid)
  WHERE s.name = 'capture_info'
)
SELECT
  w.label,
  count(*) AS writes,
  count(*) - count(DISTINCT w.slba) - max(w.slba IS NULL) AS lba_reuse, -- every write of an slba after its first
  coalesce(sum(p.pos IS NOT NULL AND w.slba = p.slba + coalesce(p.dlen, 0) / coalesce(i.lba, 4096)), 0) * 1.0
    / max(1, count(*) - 1) AS seq_pct,
  count(CASE WHEN w.role = 'header' THEN 1 END) AS header_cmds, -- 0, not NULL, when no write has a role
  coalesce(sum(CASE WHEN w.role = 'header' THEN w.dlen END), 0) AS header_cmd_bytes, -- bytes
  (SELECT coalesce(hdr, 131072) FROM info WHERE info.label = w.label) AS header_bytes
FROM kvio_space_w w
LEFT JOIN kvio_space_w p ON p.pos = w.pos - 1 AND p.label = w.label
LEFT JOIN info i ON i.label = w.label
GROUP BY w.label
ORDER BY w.label;
