"""A user's own data as sources the agents and consoles work over: files, DuckDB and PostgreSQL databases."""
