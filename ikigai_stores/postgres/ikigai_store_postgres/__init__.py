"""ikigai's session log in PostgreSQL (``sessions_url = postgresql://...``)."""
