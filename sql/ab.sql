-- ab.sql — paired A/B object diffs. The base arm is :base_label (kvio-report
-- --base), or when it is unset (NULL) the first label in string order. Store/load objects with a key are matched across arms on (key, op)
-- and their order by begin time (the k-th store of a key in one arm with the
-- k-th in the other); delta = other span - base span (ns, negative = other
-- faster), p50 and p95 per (other label, op).
-- Its samples, the TEMP tables kvio_ab_base (label) and kvio_ab_delta (label,
-- op, d), are what html_ab.sql draws.
-- Inputs: kvio_object (prelude.sql); kvio_pct (the extension).
DROP TABLE IF EXISTS temp.kvio_ab_base;
DROP TABLE IF EXISTS temp.kvio_ab_delta;
CREATE TEMP TABLE kvio_ab_base AS                  -- the base label
SELECT coalesce(:base_label, min(label)) AS label FROM kvio_object;
CREATE TEMP TABLE kvio_ab_delta AS                 -- (non-base label, op, other - base span, ns)
WITH k AS (
  SELECT label, key, op, dur,
    row_number() OVER (PARTITION BY label, key, op ORDER BY ts, id) AS nth
  FROM kvio_object
  WHERE key IS NOT NULL AND key <> '' AND op IN ('store', 'load')
    AND (SELECT count(DISTINCT label) > 1 FROM kvio_object) -- one arm: nothing to pair (no numbering)
)
SELECT o.label, o.op, o.dur - b.dur AS d
FROM k b JOIN kvio_ab_base base ON b.label = base.label
JOIN k o ON o.key = b.key AND o.op = b.op AND o.nth = b.nth AND o.label <> b.label;

SELECT
  k1 AS label,
  (SELECT label FROM kvio_ab_base) AS vs,         -- base label
  k2 AS op,                                        -- store | load
  n,                                               -- paired objects
  p50 AS delta_p50,                                -- ns
  p95 AS delta_p95                                 -- ns
FROM kvio_pct((SELECT kvio_pct_gather(label, op, d) FROM kvio_ab_delta))
ORDER BY label, op;
