-- html_qd1.sql — the QD1 picture (kvio-report --html): per label and op, the
-- histogram of per-object submission gaps. It counts qd1.sql's
-- gap samples (load and store: consecutive submits of objects with >= 4
-- commands, kvio_gaps_gather). Bins are log-spaced, 10 per decade
-- (kvio_log_bins): bin b holds gaps in [10^(b/10), 10^((b+1)/10)) ns (a gap of
-- 0 counts as 1 ns); every bin from one below the lowest to one above the
-- highest is listed, empty ones as 0, so the curve closes at both ends. (The
-- page draws the service time, qd1's svc, as a vertical line: a serialized
-- path peaks on it.)
-- Inputs: kvio_command_ordered_batches, kvio_proc, kvio_rule (prelude.sql); kvio_gaps_gather, kvio_is,
-- kvio_log_bins (the extension).
WITH counted AS (                                  -- gaps per (lid, op, bin)
  SELECT k1 AS label, CASE k2 WHEN 1 THEN 'load' ELSE 'store' END AS op, bin, count AS n
  FROM kvio_log_bins((
    SELECT kvio_gaps_gather(lid, tid, ts, kvio_is(op, 'read'), (SELECT qd1_min_cmds FROM kvio_rule)) -- as qd1.sql
    FROM kvio_command_ordered_batches WHERE tid > 0), 10)
), bin_range(label, op, bin, hi) AS (              -- every bin of the drawn range
  SELECT label, op, min(bin) - 1, max(bin) + 1 FROM counted GROUP BY label, op
  UNION ALL
  SELECT label, op, bin + 1, hi FROM bin_range WHERE bin < hi
)
SELECT
  'qd1:' || r.op AS chart,                         -- qd1:load | qd1:store
  (SELECT label FROM kvio_proc WHERE upid = r.label) AS label, -- arm (r.label: its lid)
  '' AS role,
  power(10, (r.bin + 0.5) / 10.0) AS x,            -- bin centre, geometric (ns)
  coalesce(c.n, 0) AS y                            -- gaps in the bin
FROM bin_range r
LEFT JOIN counted c ON c.label = r.label AND c.op = r.op AND c.bin = r.bin
ORDER BY chart, label, role, r.bin;
