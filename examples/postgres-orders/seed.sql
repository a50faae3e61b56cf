-- Sample data for examples/postgres-orders: psql postgres://postgres@127.0.0.1:5432/test -f seed.sql
-- Everything is in a schema of its own, redflow_example (made if missing): only its orders table
-- is replaced, and nothing else in the database is touched.
CREATE SCHEMA IF NOT EXISTS redflow_example;
DROP TABLE IF EXISTS redflow_example.orders;
CREATE TABLE redflow_example.orders (
  id         text PRIMARY KEY,
  customer   text NOT NULL,
  status     text NOT NULL,
  total      numeric(10, 2) NOT NULL,
  updated_at timestamptz NOT NULL
);
INSERT INTO redflow_example.orders (id, customer, status, total, updated_at) VALUES
  ('A-1001', 'Ada', 'shipped', 42.50, '2024-05-01 10:00:00+00'),
  ('A-1002', 'Grace', 'processing', 19.99, '2024-05-02 08:30:00+00'),
  ('A-1003', 'Linus', 'delivered', 125.00, '2024-04-28 16:45:00+00');
