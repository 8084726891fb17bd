-- failed.sql — failed KV object ops per label: objects whose error arg is set
-- (kvio_object.failed: not NULL, '' or 0; findings.sql lists each).
-- Inputs: kvio_object (prelude.sql).
SELECT
  label,
  count(*) AS failed_ops,                          -- objects with an error
  (SELECT group_concat(e, char(31)) FROM (
     SELECT DISTINCT CAST(error AS TEXT) AS e FROM kvio_object f
     WHERE f.label = o.label AND f.failed
     ORDER BY 1)) AS errors                        -- distinct errors, sorted, separated by char(31)
FROM kvio_object o
WHERE failed
GROUP BY label
ORDER BY label;
