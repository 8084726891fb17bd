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
-- Inputs: kvio_pool, kvio_cmd_proc, kvio_proc (prelude.sql), capture_info slices;
-- kvio_groups (the extension).
WITH info AS (
  SELECT p.label,
    coalesce(extract_arg(s.arg_set_id, 'debug.lba_bytes'), 4096) AS lba,
    coalesce(extract_arg(s.arg_set_id, 'debug.header_bytes'), 131072) AS hdr
  FROM kvio_slice s JOIN process_track pt ON s.track_id = pt.id JOIN kvio_proc p USING (upid)
  WHERE s.name = 'capture_info'
), lba AS MATERIALIZED (                           -- each command label's lba_bytes
  SELECT c.lid, coalesce(i.lba, 4096) AS lba
  FROM kvio_cmd_proc c JOIN kvio_proc p ON p.upid = c.lid LEFT JOIN info i ON i.label = p.label
), seq AS (                                        -- writes starting where the previous one ended
  SELECT k1 AS lid, n
  FROM kvio_groups((SELECT kvio_step_gather(w.lid, w.slba, w.slba + coalesce(w.dlen, 0) / l.lba)
                    FROM (SELECT lid, slba, dlen FROM kvio_pool WHERE op = 'write' ORDER BY lid, ts, id) w
                    JOIN lba l ON l.lid = w.lid))
  WHERE k2 = 0
), per AS (
  SELECT
    lid,
    count(*) AS writes,
    count(*) - count(DISTINCT slba) - max(slba IS NULL) AS lba_reuse, -- every write of an slba after its first
    count(CASE WHEN role = 'header' THEN 1 END) AS header_cmds, -- 0, not NULL, when no write has a role
    coalesce(sum(CASE WHEN role = 'header' THEN dlen END), 0) AS header_cmd_bytes -- bytes
  FROM kvio_pool WHERE op = 'write'
  GROUP BY lid
)
SELECT
  p.label,
  w.writes,
  w.lba_reuse,
  coalesce(s.n, 0) * 1.0 / max(1, w.writes - 1) AS seq_pct,
  w.header_cmds,
  w.header_cmd_bytes,
  (SELECT coalesce(hdr, 131072) FROM info WHERE info.label = p.label) AS header_bytes
FROM per w
JOIN kvio_proc p ON p.upid = w.lid
LEFT JOIN seq s ON s.lid = w.lid
ORDER BY p.label;
