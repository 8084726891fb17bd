-- commands.sql — NVMe command counts, bytes, wall time and throughput per label.
-- Inputs: kvio_command, kvio_pool (prelude.sql).
SELECT
  c.label,
  count(*) AS n,                                   -- commands
  sum(c.tagged) AS tagged,                         -- commands with trace_id != 0
  count(*) - sum(c.tagged) AS untagged,            -- commands with trace_id 0
  coalesce(p.bytes, 0) AS tagged_bytes,            -- sum of data_len over the pool (bytes)
  max(c.ts + c.dur) - min(c.ts) AS wall_ns,        -- last end - first submit, all commands (ns)
  sum(c.real) * 1.0 / max(1, count(*)) AS real_cover, -- share of commands with a real duration
  CASE WHEN max(c.ts + c.dur) > min(c.ts)
    THEN coalesce(p.bytes, 0) * 1.0 / (max(c.ts + c.dur) - min(c.ts))
  END AS throughput_gbs                            -- tagged_bytes / wall_ns (bytes/ns = GB/s)
FROM kvio_command c
LEFT JOIN (SELECT label, sum(dlen) AS bytes FROM kvio_pool GROUP BY label) p USING (label)
GROUP BY c.label
ORDER BY c.label;
