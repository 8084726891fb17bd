-- failed.sql — failed KV object ops per label: objects whose error arg is set.
-- Inputs: kvio_object (prelude.sql).
SELECT
  label,
  count(*) AS failed_ops,                          -- objects with an error
  (SELECT group_concat(e, char(31)) FROM (
     SELECT DISTINCT CAST(error AS TEXT) AS e FROM kvio_object f
     WHERE f.label = o.label AND NOT (f.error IS NULL OR f.error = '' OR f.error = 0)
     ORDER BY 1)) AS errors                        -- distinct errors, sorted, separated by char(31)
FROM kvio_object o
WHERE NOT (error IS NULL OR error = '' OR error = 0)
GROUP BY label
ORDER BY label;
