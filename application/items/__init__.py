"""Per-benchmark builders of the audit trail's ``ItemRecord``s, called by each service with what it computed."""
