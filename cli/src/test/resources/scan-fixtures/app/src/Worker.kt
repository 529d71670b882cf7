package app
val sql = """
  SELECT "pg_advisory_lock"(1)
"""
val fine = "SELECT 1"
