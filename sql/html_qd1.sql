-- html_qd1.sql — the QD1 picture (kvio-report --html): per label and op, the
-- histogram of per-object submission gaps. Run after qd1.sql: it counts that
-- file's gap samples (kvio_sample groups load and store: consecutive submits
-- of objects with >= 4 commands). Bins are log-spaced, 10 per decade: bin b
-- holds gaps in [10^(b/10), 10^((b+1)/10)) ns (a gap of 0 counts as 1 ns);
-- every bin from one below the lowest to one above the highest is listed, empty
-- ones as 0, so the curve closes at both ends. (The page draws the service
-- time, qd1's svc, as a vertical line: a serialized path peaks on it.)
-- Inputs: kvio_sample as qd1.sql leaves it.
WITH gap AS (
  SELECT label, grp AS op, CAST(floor(10 * log10(max(v, 1))) AS INTEGER) AS bin
  FROM kvio_sample WHERE grp IN ('load', 'store')
), counted AS (                                    -- gaps per (label, op, bin)
  SELECT label, op, bin, count(*) AS n FROM gap GROUP BY label, op, bin
), bin_range(label, op, bin, hi) AS (              -- every bin of the drawn range
  SELECT label, op, min(bin) - 1, max(bin) + 1 FROM counted GROUP BY label, op
  UNION ALL
  SELECT label, op, bin + 1, hi FROM bin_range WHERE bin < hi
)
SELECT
  'qd1:' || r.op AS chart,                         -- qd1:load | qd1:store
  r.label,                                         -- arm
  '' AS role,
  power(10, (r.bin + 0.5) / 10.0) AS x,            -- bin centre, geometric (ns)
  coalesce(c.n, 0) AS y                            -- gaps in the bin
FROM bin_range r
LEFT JOIN counted c ON c.label = r.label AND c.op = r.op AND c.bin = r.bin
ORDER BY chart, r.label, role, r.bin;
