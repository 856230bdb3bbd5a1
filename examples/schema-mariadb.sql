-- The target table of the examples, for MariaDB or MySQL. txsink does not
-- create target tables: create it first, e.g.
--   mariadb -u app -p shop < examples/schema-mariadb.sql
CREATE TABLE products (
  id       INT NOT NULL PRIMARY KEY,
  name     VARCHAR(100) NOT NULL,
  price    DECIMAL(10,2) NOT NULL,
  quantity INT NOT NULL,
  note     VARCHAR(200) NULL
) CHARACTER SET utf8mb4;
