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
-- Inputs: kvio_pool_batches, kvio_pool_ordered_batches, kvio_cmd_proc, kvio_proc (prelude.sql),
-- capture_info slices (kvio_space_info, a TEMP table of this file);
-- kvio_groups, kvio_count_distinct (the extension).
DROP TABLE IF EXISTS temp.kvio_space_info;
CREATE TEMP TABLE kvio_space_info(lid INTEGER PRIMARY KEY, lba, hdr); -- each command label's lba_bytes, header_bytes (NULL: no capture_info)
INSERT INTO kvio_space_info
SELECT c.lid, coalesce(i.lba, 4096), CASE WHEN i.label IS NOT NULL THEN coalesce(i.hdr, 131072) END
FROM kvio_cmd_proc c JOIN kvio_proc p ON p.upid = c.lid
LEFT JOIN (SELECT p.label,
             extract_arg(s.arg_set_id, 'debug.lba_bytes') AS lba,
             extract_arg(s.arg_set_id, 'debug.header_bytes') AS hdr
           FROM kvio_slice s JOIN process_track pt ON s.track_id = pt.id JOIN kvio_proc p USING (upid)
           WHERE s.name = 'capture_info') i ON i.label = p.label;

WITH seq AS (                                      -- writes starting where the previous one ended:
  SELECT i.lid, s.n                                -- step 0 from slba + dlen / lba of the one before
  FROM kvio_space_info i,                          -- (each label over its own writes, in submit order)
    kvio_groups((SELECT kvio_step_gather(lid, slba, slba, dlen, i.lba)
                 FROM kvio_pool_ordered_batches WHERE op = 'write' AND lid = i.lid)) s
  WHERE s.k2 = 0
), w AS (                                          -- the writes per (lid, role), col 1 dlen, col 2 slba
  SELECT k1 AS lid, k2 AS role, col, n, count, sum
  FROM kvio_groups((SELECT kvio_group_gather(lid, role, dlen, slba) FROM kvio_pool_batches WHERE op = 'write'))
), per AS (
  SELECT
    lid,
    sum(n) FILTER (WHERE col = 1) AS writes,
    sum(count) FILTER (WHERE col = 2) < sum(n) FILTER (WHERE col = 1) AS no_slba, -- 1: a write has no slba
    coalesce(sum(n) FILTER (WHERE col = 1 AND role = 'header'), 0) AS header_cmds,
    coalesce(sum(sum) FILTER (WHERE col = 1 AND role = 'header'), 0) AS header_cmd_bytes
  FROM w
  GROUP BY lid
)
SELECT
  p.label,
  w.writes,
  w.writes - (SELECT kvio_count_distinct(slba) FROM kvio_pool_batches WHERE op = 'write' AND lid = w.lid)
    - w.no_slba AS lba_reuse,                      -- every write of an slba after its first (the writes
                                                   -- without one count as one slba)
  coalesce(s.n, 0) * 1.0 / max(1, w.writes - 1) AS seq_pct,
  w.header_cmds,                                   -- 0, not NULL, when no write has a role
  w.header_cmd_bytes,                              -- bytes
  (SELECT hdr FROM kvio_space_info i WHERE i.lid = w.lid) AS header_bytes
FROM per w
JOIN kvio_proc p ON p.upid = w.lid
LEFT JOIN seq s ON s.lid = w.lid
ORDER BY p.label;
